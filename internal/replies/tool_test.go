package replies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

func TestRepliesTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	conv := repliestest.NewConversation(ctx, t, store, 250)
	svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
	require.NoError(t, err)
	// Discord thread ids are found as the app finds them, by Discord's Locator.
	tool := replies.Tool(svc, &tenancy.Reach{Store: store, Locators: []tenancy.Locator{surfacediscord.Locator(store, nil, nil)}})
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	_, ok := reg.Get("get_thread_replies")
	require.True(t, ok)

	call := func(t *testing.T, args map[string]any) (*replies.Response, error) {
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		out, err := tool.Handler(ctx, tools.Call{ThreadID: conv.Thread.ID, Arguments: raw})
		if err != nil {
			return nil, err
		}
		repliestest.CheckShape(t, []byte(out))
		var resp replies.Response
		require.NoError(t, json.Unmarshal([]byte(out), &resp))
		return &resp, nil
	}

	for _, order := range []string{"oldest", "newest"} {
		t.Run("PagesThisThread/"+order, func(t *testing.T) {
			t.Parallel()
			got := repliestest.Walk(t, 40, func(cursor string) *replies.Response {
				resp, err := call(t, map[string]any{"limit": 40, "order": order, "cursor": cursor})
				require.NoError(t, err)
				return resp
			})
			conv.Check(t, got, order == "newest")
		})
	}

	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"UnknownThread", map[string]any{"thread_id": thread.NewID().String()}, "NotFound: no such thread"},
		{"BadOrder", map[string]any{"order": "sideways"}, "InvalidArgument: order must be oldest or newest"},
		{"BadCursor", map[string]any{"cursor": "%%%"}, "InvalidArgument: cursor is not one this API returned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := call(t, tt.args)
			require.EqualError(t, err, tt.want)
		})
	}

	t.Run("AnotherServersThread", func(t *testing.T) {
		t.Parallel()
		other := repliestest.NewConversation(ctx, t, store, 3) // in a server of its own
		for _, id := range []string{other.Thread.ID.String(), other.DiscordThreadID} {
			_, err := call(t, map[string]any{"thread_id": id})
			require.EqualError(t, err, "AuthorizationError: "+tenancy.ErrOutOfReach.Error())
		}
	})

	t.Run("ByDiscordThreadID", func(t *testing.T) {
		t.Parallel()
		resp, err := call(t, map[string]any{"thread_id": conv.DiscordThreadID, "limit": 3})
		require.NoError(t, err)
		require.Equal(t, conv.DiscordThreadID, resp.ThreadID)
		require.Equal(t, conv.Replies[:3], texts(resp.Replies))
	})
}

// oneSlackThread is a Slack thread of a parent and one reply.
type oneSlackThread struct{}

func (oneSlackThread) Replies(_ context.Context, q replies.SlackQuery) (replies.SlackPage, error) {
	parent, reply := "deploy is stuck", "which one?"
	return replies.SlackPage{Messages: []replies.SlackMessage{{TS: q.ThreadTS, User: "U1", Text: &parent},
		{TS: "1700000001.000100", User: "U2", Text: &reply}}}, nil
}

// TestRepliesToolSlack reads a Slack thread by channelId and threadTs, from
// a conversation on no platform; one in a Discord server may not.
func TestRepliesToolSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	svc, err := replies.New(replies.Config{Store: store, Slack: oneSlackThread{}, Logger: logtest.New(t)})
	require.NoError(t, err)
	tool := replies.Tool(svc, &tenancy.Reach{Store: store})
	args := json.RawMessage(`{"channelId": "C0123", "threadTs": "1700000000.000100"}`)

	cli := dbtest.Thread(ctx, t, store, nil)
	out, err := tool.Handler(ctx, tools.Call{ThreadID: cli.ID, Arguments: args})
	require.NoError(t, err)
	require.JSONEq(t, `{"parent": {"ts": "1700000000.000100", "user": "U1", "text": "deploy is stuck", "edited": false, "deleted": false, "subtype": null},
		"replies": [{"ts": "1700000001.000100", "user": "U2", "text": "which one?", "edited": false, "deleted": false, "subtype": null}],
		"nextCursor": null, "hasMore": false}`, out)

	inDiscord := repliestest.NewConversation(ctx, t, store, 1)
	_, err = tool.Handler(ctx, tools.Call{ThreadID: inDiscord.Thread.ID, Arguments: args})
	require.EqualError(t, err, "AuthorizationError: "+tenancy.ErrOutOfReach.Error())

	_, err = tool.Handler(ctx, tools.Call{ThreadID: cli.ID, Arguments: json.RawMessage(`{"channelId": "C0123", "threadTs": "1700000000.000100", "thread_id": "x"}`)})
	require.ErrorContains(t, err, "InvalidArgument")
}

func texts(ms []replies.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprint(*m.Text)
	}
	return out
}

// TestRepliesToolSchema pins what the model is told of get_thread_replies'
// arguments: none required, each described, order an enum, limit bounded.
func TestRepliesToolSchema(t *testing.T) {
	t.Parallel()
	tool := replies.Tool(nil, nil)
	require.JSONEq(t, `{
		"type": "object",
		"properties": {
			"thread_id": {"type": "string", "description": "weft thread id (UUID) or Discord thread id; default: this thread"},
			"channelId": {"type": "string", "description": "Slack conversation id of a Slack thread, with threadTs"},
			"threadTs": {"type": "string", "description": "ts of the Slack thread's parent message, with channelId"},
			"teamId": {"type": "string", "description": "Slack workspace id (T…) of the channel, when weft may not know it"},
			"limit": {"type": "integer", "description": "replies per page (default 50)", "minimum": 1, "maximum": 200},
			"cursor": {"type": "string", "description": "nextCursor of the previous page"},
			"order": {"type": "string", "description": "default oldest", "enum": ["oldest", "newest"]}
		},
		"additionalProperties": false
	}`, string(tool.Schema))
}
