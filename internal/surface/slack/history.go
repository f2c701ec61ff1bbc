package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/thread"
)

// SlackBackfill reads what a Slack thread said before weft joined it: the
// thread's messages older than beforeTS (conversations.replies), oldest
// first. Everything from weft's first message on is in Postgres already.
type SlackBackfill interface {
	SlackThreadBefore(ctx context.Context, att *thread.SlackAttachment, beforeTS string) ([]history.Message, error)
}

// SlackAttachments finds a thread's Slack attachment. *db.Store
// implements it.
type SlackAttachments interface {
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
}

// SlackSection is Slack's history Section.
type SlackSection struct {
	// Backfill reads what a Slack thread said before weft joined it; nil
	// leaves Slack's history to what weft stored.
	Backfill SlackBackfill
	Store    SlackAttachments
}

// Section is thread-context-retrieval.md's section for a Slack
// thread: the thread's messages as "name: text" in <slack_thread_context>
// and the current question apart. The messages come from the stored chain
// (weft records every message of a thread it is in) and, for a thread weft
// joined mid-way, from Slack for what came before, cached for the TTL. A
// failed backfill is logged and skipped.
func (x *SlackSection) Section(ctx context.Context, h *history.History, th *thread.Thread, chain []thread.Stitch, cur *thread.Stitch) []string {
	att, err := x.Store.SlackAttachment(ctx, th.ID)
	if err != nil {
		h.Logger.WarnContext(ctx, "slack thread unknown; answering without its history",
			slog.String("thread_id", th.ID.String()), slog.Any("error", err))
		return nil
	}
	var lines []string
	// The first message weft saw (the mention that brought it in is the
	// initial prompt): the thread before it is Slack's to tell.
	first := ""
	for _, s := range chain {
		if s.Source == thread.PlatformSlack && s.Type.IsInput() {
			if ts := SlackTS(s.ExternalID); ts != "" && (first == "" || TSBefore(ts, first)) {
				first = ts
			}
		}
	}
	if x.Backfill != nil && first != "" && TSBefore(att.ThreadTS, first) {
		before, err := h.Fetch(ctx, "slack:"+att.TeamID+"/"+att.ChannelID+"/"+att.ThreadTS+"<"+first,
			slackFetcher{x.Backfill, att, first}, history.Ref{})
		if err != nil {
			h.Logger.WarnContext(ctx, "slack thread history unavailable; answering without what came before weft",
				slog.String("thread_id", th.ID.String()), slog.Any("error", err))
		}
		for _, m := range before {
			lines = history.AppendLine(lines, history.Line(m.Author, m.Text, m.Edited, m.Deleted))
		}
	}
	if att.ChannelType == "im" && first == att.ThreadTS {
		lines = append(lines, x.previousDM(ctx, h, att)...)
	}
	for i := range chain {
		s := &chain[i]
		if s.ID == cur.ID {
			break // the current question goes apart; nothing after it is history
		}
		lines = history.AppendLine(lines, history.StoredLine(s, th.AgentName))
	}
	if len(lines) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("<slack_thread_context>\n%s</slack_thread_context>\nCurrent question: %s",
		strings.Join(lines, ""), cur.Content)}
}

// DMIdle is how long a direct message conversation stays open: a new
// top-level direct message within it of the last one's activity continues
// that conversation (its messages come first in the prompt), after it
// starts afresh.
const DMIdle = 30 * time.Minute

// maxDMMessages bounds what a direct message carries of the one before.
const maxDMMessages = 50

// SlackDMs finds the conversation a new top-level direct message
// continues. *db.Store implements it; a Store that does not leaves each
// top-level direct message a conversation of its own.
type SlackDMs interface {
	PreviousSlackConversation(ctx context.Context, att *thread.SlackAttachment, since time.Time, limit int) (*thread.Thread, []thread.Stitch, error)
}

// previousDM is the previous conversation of a direct message channel, if
// it was active within DMIdle, as context lines.
func (x *SlackSection) previousDM(ctx context.Context, h *history.History, att *thread.SlackAttachment) []string {
	dms, ok := x.Store.(SlackDMs)
	if !ok {
		return nil
	}
	prev, msgs, err := dms.PreviousSlackConversation(ctx, att, time.Now().Add(-DMIdle), maxDMMessages)
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	if err != nil {
		h.Logger.WarnContext(ctx, "previous direct message conversation unavailable; answering without it",
			slog.String("thread_id", att.ThreadID.String()), slog.Any("error", err))
		return nil
	}
	var lines []string
	for i := range msgs {
		s := &msgs[i]
		lines = history.AppendLine(lines, history.StoredLine(s, prev.AgentName))
	}
	return lines
}

// slackFetcher adapts a backfill to the history cache.
type slackFetcher struct {
	b      SlackBackfill
	att    *thread.SlackAttachment
	before string
}

func (f slackFetcher) ThreadHistory(ctx context.Context, _ history.Ref) ([]history.Message, error) {
	return f.b.SlackThreadBefore(ctx, f.att, f.before)
}

// SlackTS is the ts of a stored Slack message (team/channel/ts).
func SlackTS(externalID string) string {
	i := strings.LastIndexByte(externalID, '/')
	if i < 0 {
		return ""
	}
	return externalID[i+1:]
}

// TSBefore orders Slack timestamps ("1700000000.000100").
func TSBefore(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	if as != bs {
		return as < bs
	}
	return af < bf
}
