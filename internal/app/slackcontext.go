package app

import (
	"context"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// maxSlackBackfill bounds what is read of a thread from before weft joined
// it: the prompt keeps the thread's recent past, not all of it.
const maxSlackBackfill = 200

// slackBackfill reads the part of a Slack thread weft did not see, through
// conversations.replies with its workspace's token, newest kept when the
// thread is longer.
type slackBackfill struct{ ws *slack.Workspaces }

func (b slackBackfill) SlackThreadBefore(ctx context.Context, att *thread.SlackAttachment, beforeTS string) ([]tools.HistoryMessage, error) {
	c, err := b.ws.Client(ctx, att.TeamID)
	if err != nil {
		return nil, err
	}
	var out []tools.HistoryMessage
	o := slack.ReadOptions{Latest: beforeTS, Limit: maxSlackBackfill}
	for {
		pg, err := c.Replies(ctx, att.ChannelID, att.ThreadTS, o)
		if err != nil {
			return nil, err
		}
		for _, m := range pg.Messages {
			who := "User"
			if m.BotID != "" {
				who = "Bot"
			}
			out = append(out, tools.HistoryMessage{ID: m.TS, Author: who, Text: m.Text})
		}
		if pg.NextCursor == "" || len(out) >= maxSlackBackfill {
			break
		}
		o.Cursor = pg.NextCursor
	}
	return out[max(0, len(out)-maxSlackBackfill):], nil
}

// backfill is Slack's history reader for the prompt; nil with Slack off.
func (a *slackApp) backfill() tools.SlackBackfill {
	if !a.on() {
		return nil
	}
	return slackBackfill{a.ws}
}
