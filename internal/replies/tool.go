package replies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/toolschema"
)

// repliesArgs are get_thread_replies' arguments.
type repliesArgs struct {
	ThreadID string `json:"thread_id,omitempty" jsonschema:"weft thread id (UUID) or Discord thread id; default: this thread"`
	// A Slack thread, named as get-thread-replies.md names it.
	ChannelID string `json:"channelId,omitempty" jsonschema:"Slack conversation id of a Slack thread, with threadTs"`
	ThreadTS  string `json:"threadTs,omitempty" jsonschema:"ts of the Slack thread's parent message, with channelId"`
	TeamID    string `json:"teamId,omitempty" jsonschema:"Slack workspace id (T…) of the channel, when weft may not know it"`
	Limit     int    `json:"limit,omitempty" jsonschema:"replies per page (default 50)" minimum:"1" maximum:"200"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
	Order     Order  `json:"order,omitempty" jsonschema:"default oldest" enum:"oldest,newest"`
}

// Tool is get_thread_replies, for the agent: a thread's parent message and
// replies, a page at a time, from the same Service as the REST API and the
// MCP tool. Without a thread id it reads the thread the agent is in; other
// threads only within reach.
func Tool(svc *Service, reach *tenancy.Reach) tools.Tool {
	return tools.Tool{
		Name: "get_thread_replies",
		Description: "Read a conversation thread: its first message (parent) and the replies after it, a page at a time. " +
			"thread_id is a weft thread id or a Discord thread id; omit it for this thread. " +
			"A Slack thread is named by channelId and threadTs instead. Either answers as {parent, replies, nextCursor, hasMore}, " +
			"each message with its ts, user (the author's id), text, edited, deleted and subtype. " +
			"Pass nextCursor from a result as cursor to read on. Deleted replies have text null.",
		Schema: toolschema.For[repliesArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[repliesArgs](c)
			if err != nil {
				return "", err
			}
			slack := args.ChannelID != "" || args.ThreadTS != "" || args.TeamID != ""
			if slack && args.ThreadID != "" {
				return "", fmt.Errorf("%s: give thread_id, or channelId and threadTs, not both", httpapi.CodeInvalidArgument)
			}
			if args.ThreadID == "" && !slack {
				args.ThreadID = c.ThreadID.String()
			}
			if slack {
				var in thread.Tenant
				if in, err = reach.Within(ctx, c.ThreadID, SlackWorkspace(svc.store, args.TeamID, args.ChannelID)); in.ID != "" {
					args.TeamID = in.ID
				}
			} else {
				err = reach.Check(ctx, c.ThreadID, args.ThreadID)
			}
			if errors.Is(err, tenancy.ErrOutOfReach) {
				return "", fmt.Errorf("%s: %w", httpapi.CodeAuthorization, err)
			} else if err != nil {
				return "", fmt.Errorf("%s: the thread could not be read; try again later", httpapi.CodeUnavailable)
			}
			var resp any
			if slack {
				resp, err = svc.GetSlack(ctx, SlackRequest{TeamID: args.TeamID, ChannelID: args.ChannelID, ThreadTS: args.ThreadTS,
					Limit: args.Limit, Cursor: args.Cursor, Order: args.Order})
			} else {
				resp, err = svc.Get(ctx, Request{ThreadID: args.ThreadID, Limit: args.Limit, Cursor: args.Cursor, Order: args.Order})
			}
			if err != nil {
				// The model sees the code and the safe message, never the cause.
				var e *httpapi.Error
				if errors.As(err, &e) {
					return "", fmt.Errorf("%s: %s", e.Code, e.Message)
				}
				return "", err
			}
			out, err := json.Marshal(resp)
			if err != nil {
				return "", fmt.Errorf("encode replies: %w", err)
			}
			return string(out), nil
		},
	}
}
