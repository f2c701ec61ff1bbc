// The replies source reads Slack threads for get-thread-replies: it adapts
// weft's Slack client to replies.Slack, its messages in
// get-thread-replies.md's shape and its failures as its error codes. The
// wiring plugs it in when Slack is configured.

package slack

import (
	"context"
	"errors"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// RepliesReader is weft's Slack clients as get-thread-replies reads them, each
// workspace with its own token. A client retries what is transient (up to
// 3 times, with backoff) and returns a rate limit or an auth failure at
// once, as the origin design asks.
type RepliesReader struct {
	ws       *slackapi.Workspaces
	channels ChannelTeams
}

// ChannelTeams finds the workspace of a channel weft has a thread in.
// *db.Store implements it.
type ChannelTeams interface {
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
}

var _ replies.Slack = RepliesReader{}

// NewReplies reads through ws, finding a channel's workspace in channels when a
// query names none.
func NewReplies(ws *slackapi.Workspaces, channels ChannelTeams) RepliesReader {
	return RepliesReader{ws, channels}
}

// Replies implements replies.Slack with conversations.replies.
func (r RepliesReader) Replies(ctx context.Context, q replies.SlackQuery) (replies.SlackPage, error) {
	c, err := r.client(ctx, q)
	if err != nil {
		return replies.SlackPage{}, err
	}
	pg, err := c.Replies(ctx, q.ChannelID, q.ThreadTS, slackapi.ReadOptions{Cursor: q.Cursor, Latest: q.Latest, Limit: q.Limit})
	if err != nil {
		return replies.SlackPage{}, Failure(err)
	}
	out := replies.SlackPage{HasMore: pg.HasMore, NextCursor: pg.NextCursor, Messages: make([]replies.SlackMessage, 0, len(pg.Messages))}
	for _, m := range pg.Messages {
		out.Messages = append(out.Messages, Message(m))
	}
	return out, nil
}

var _ replies.SlackMembers = RepliesReader{}

// IsMember implements replies.SlackMembers with conversations.members.
func (r RepliesReader) IsMember(ctx context.Context, q replies.SlackQuery, userID string) (bool, error) {
	c, err := r.client(ctx, q)
	if err != nil {
		return false, err
	}
	ok, err := c.IsMember(ctx, q.ChannelID, userID)
	if err != nil {
		return false, Failure(err)
	}
	return ok, nil
}

// client is the client of the query's workspace: named, else the one weft
// has a thread in that channel in, else SLACK_BOT_TOKEN's.
func (r RepliesReader) client(ctx context.Context, q replies.SlackQuery) (*slackapi.Client, error) {
	team := q.TeamID
	if team == "" {
		var err error
		team, err = r.channels.SlackChannelTeam(ctx, q.ChannelID)
		if errors.Is(err, thread.ErrNotFound) {
			team, err = r.ws.DefaultTeam(ctx)
		}
		if errors.Is(err, slackapi.ErrNotInstalled) {
			return nil, &httpapi.Error{Code: httpapi.CodeNotFound, Err: err,
				Message: "weft knows no Slack workspace with this channel; name it with teamId"}
		} else if err != nil {
			return nil, err
		}
	}
	c, err := r.ws.Client(ctx, team)
	if errors.Is(err, slackapi.ErrNotInstalled) {
		return nil, &httpapi.Error{Code: httpapi.CodeAuthorization, Err: err, Message: "weft is not installed in this Slack workspace"}
	}
	return c, err
}

// Message is a Slack message in get-thread-replies.md's shape; a bot's
// message names its bot id as the user when it has no user.
func Message(m slackapi.Message) replies.SlackMessage {
	text := m.Text
	out := replies.SlackMessage{TS: m.TS, User: m.User, Text: &text, Edited: m.EditedTS != ""}
	if out.User == "" {
		out.User = m.BotID
	}
	if m.Subtype != "" {
		st := m.Subtype
		out.Subtype = &st
	}
	return out
}

// Failure is a Slack failure as get-thread-replies answers it
// (replies.PlatformFailure), but for an HTTP 404 from Slack's host without
// Slack's own error code (a proxy, a wrong SLACK_API_URL), which says
// nothing about the thread: Unavailable, not NotFound.
func Failure(err error) error {
	var se *surface.Error
	if errors.As(err, &se) && se.Kind == surface.KindNotFound && se.Code == "" {
		return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "Slack's API could not be reached (HTTP 404); try again later", Err: err}
	}
	return replies.PlatformFailure(err, "Slack", "Slack conversation", "Slack conversation or thread")
}
