package slack

import (
	"context"
	"fmt"
	"slices"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/history"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// maxSlackBackfill bounds what is read of a thread from before weft joined
// it: the prompt keeps the thread's parent and recent past, not all of it.
// maxBackfillPages bounds the walk to that past (Slack pages a thread
// oldest first): 2,000 messages.
const (
	maxSlackBackfill = 200
	maxBackfillPages = 10
)

// slackBackfill reads the part of a Slack thread weft did not see, through
// conversations.replies with its workspace's token: the parent and the
// newest messages when the thread is longer.
type slackBackfill struct{ ws *slackapi.Workspaces }

func (b slackBackfill) SlackThreadBefore(ctx context.Context, att *thread.SlackAttachment, beforeTS string) ([]history.Message, error) {
	c, err := b.ws.Client(ctx, att.TeamID)
	if err != nil {
		return nil, err
	}
	msgs, err := c.NewestReplies(ctx, att.ChannelID, att.ThreadTS, beforeTS, maxSlackBackfill, maxBackfillPages)
	if err != nil {
		return nil, err
	}
	out := make([]history.Message, 0, len(msgs))
	for _, m := range msgs {
		// A bot is named as its user is, if it has one.
		who := c.UserName(ctx, m.User)
		if who == "" && m.BotID != "" {
			who = "Bot"
		}
		out = append(out, history.Message{ID: m.TS, Author: who, Text: m.Text,
			Edited: m.EditedTS != "", Deleted: m.Subtype == "tombstone"})
	}
	return out, nil
}

// Backfill is Slack's history reader for the prompt; nil with Slack off.
func (a *App) Backfill() SlackBackfill {
	if !a.On() {
		return nil
	}
	return slackBackfill{a.ws}
}

// HistorySection puts a Slack thread's history in the prompt: what weft
// stored, and what came before it joined while Slack is on.
func (a *App) HistorySection(store *db.Store) history.Section {
	return &SlackSection{Backfill: a.Backfill(), Store: store}
}

// Discovery is Slack's source for relevant thread discovery.
func (a *App) Discovery(store *db.Store) *SlackChannels {
	return &SlackChannels{Reader: slackChannels{a.ws}, Store: store, Logger: a.logger.With("component", "discovery")}
}

// slackChannels adapts *slackapi.Workspaces to discovery's reader: each
// workspace is read with its own token.
type slackChannels struct{ ws *slackapi.Workspaces }

var _ SlackChannelReader = slackChannels{}

// TopLevel implements SlackChannelReader. History pages come newest
// first; messages that are no one's words (joins, topic changes) are left
// out.
func (r slackChannels) TopLevel(ctx context.Context, teamID, channelID, latest string, n int) ([]discovery.ChannelMessage, error) {
	c, err := r.ws.Client(ctx, teamID)
	if err != nil {
		return nil, err
	}
	pg, err := c.History(ctx, channelID, slackapi.ReadOptions{Limit: n, Latest: latest})
	if err != nil {
		return nil, slackReadError(err)
	}
	out := make([]discovery.ChannelMessage, 0, len(pg.Messages))
	for _, m := range slices.Backward(pg.Messages) {
		switch m.Subtype {
		case "", "thread_broadcast", "bot_message", "file_share", "me_message":
			out = append(out, slackChannelMessage(m))
		}
	}
	return named(ctx, c, out), nil
}

// maxDiscoveryPages bounds the walk to a relevant thread's newest
// replies: discovery reads under a few seconds' timeout.
const maxDiscoveryPages = 5

// Replies implements SlackChannelReader: the parent and the newest
// replies.
func (r slackChannels) Replies(ctx context.Context, teamID, channelID, threadTS, latest string, n int) ([]discovery.ChannelMessage, error) {
	c, err := r.ws.Client(ctx, teamID)
	if err != nil {
		return nil, err
	}
	msgs, err := c.NewestReplies(ctx, channelID, threadTS, latest, n, maxDiscoveryPages)
	if err != nil {
		return nil, slackReadError(err)
	}
	out := make([]discovery.ChannelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = slackChannelMessage(m)
	}
	return named(ctx, c, out), nil
}

// BotUserID implements SlackChannelReader.
func (r slackChannels) BotUserID(ctx context.Context, teamID string) (string, error) {
	id, err := r.ws.Identity(ctx, teamID)
	return id.UserID, err
}

// SetStatus implements SlackChannelReader.
func (r slackChannels) SetStatus(ctx context.Context, teamID, channelID, threadTS, status string) error {
	c, err := r.ws.Client(ctx, teamID)
	if err != nil {
		return err
	}
	return c.SetStatus(ctx, channelID, threadTS, status)
}

func slackChannelMessage(m slackapi.Message) discovery.ChannelMessage {
	who := m.User
	if who == "" {
		who = m.BotID
	}
	// A reply broadcast to the channel is no thread's root: its thread's
	// root is in the channel too.
	noReplies := m.ThreadTS == "" && m.ReplyCount == 0 || m.ThreadTS != "" && m.ThreadTS != m.TS
	return discovery.ChannelMessage{ID: m.TS, AuthorID: who, Author: who, Bot: m.BotID != "", Text: m.Text,
		At: slackapi.ParseTS(m.TS), Edited: m.EditedTS != "", NoReplies: noReplies}
}

// named puts people's names (users.info, cached) where slackChannelMessage
// put their ids.
func named(ctx context.Context, c *slackapi.Client, msgs []discovery.ChannelMessage) []discovery.ChannelMessage {
	for i := range msgs {
		if !msgs[i].Bot {
			msgs[i].Author = c.UserName(ctx, msgs[i].AuthorID)
		}
	}
	return msgs
}

// slackReadError marks Slack's rate limits and missing conversations in
// the tools' terms, keeping Slack's error.
func slackReadError(err error) error {
	switch {
	case surface.IsKind(err, surface.KindRateLimited):
		return fmt.Errorf("%w: %w", ErrSlackRateLimited, err)
	case surface.IsKind(err, surface.KindNotFound):
		return fmt.Errorf("%w: %w", thread.ErrNotFound, err)
	}
	return err
}
