// Package history puts a conversation's platform thread history in the
// prompt: History (an agent.ContextProvider) reads the Discord thread's
// messages or the Linear issue's comments through a Fetcher, and what a
// Slack thread said before weft joined it, caching each read for a TTL.
// It holds no platform client: each platform's reader is behind an
// interface (Fetcher, SlackBackfill).
package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// Message is one message of a platform thread's history.
type Message struct {
	ID     string
	Author string
	Text   string
	// Edited and Deleted say the platform reports the message edited, or
	// deleted (a Slack tombstone); every history section marks them alike.
	Edited, Deleted bool
}

// DeletedMessage stands in for a deleted message's text, as in the
// conversation itself: the model sees that something was said and
// withdrawn, not a silent gap.
const DeletedMessage = "[this message was deleted]"

// editedMark follows an edited message's latest text.
const editedMark = " [edited]"

// line is one message of a history section, thread-context-retrieval.md's
// "User: message text": its author's name (else "User"), its text on one
// line, marked when edited, or the placeholder once deleted. Empty when
// there is nothing to show.
func line(who, text string, edited, deleted bool) string {
	if who == "" {
		who = "User"
	}
	if deleted {
		return who + ": " + DeletedMessage + "\n"
	}
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return ""
	}
	if edited {
		text += editedMark
	}
	return who + ": " + text + "\n"
}

// Ref names a platform thread: a Discord thread id, or a Linear
// issue id with the workspace whose token reads it.
type Ref struct {
	ID        string
	Workspace string
}

// Fetcher reads a platform thread's messages, oldest first: a Discord
// thread's messages, a Linear issue's comments.
type Fetcher interface {
	ThreadHistory(ctx context.Context, ref Ref) ([]Message, error)
}

// Attachments finds where a thread is attached. *db.Store implements it.
type Attachments interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
}

// DefaultTTL is how long a fetched history is reused: long enough
// that a quick back-and-forth costs one API call, short enough that a
// thread's new messages show up within minutes.
const DefaultTTL = 5 * time.Minute

// History puts the platform thread's history in the system prompt, in its
// own tagged section, with the current question marked apart, so the model
// can resolve "they" in "are they running?" to what the thread named.
type History struct {
	Discord Fetcher // nil: Discord history off
	Linear  Fetcher // nil: Linear history off
	// Slack reads what a Slack thread said before weft joined it; nil
	// leaves Slack's history to what weft stored.
	Slack  SlackBackfill
	Store  Attachments
	TTL    time.Duration
	Logger *slog.Logger

	cache ttlcache.Cache[[]Message]
}

// PromptSections implements agent.ContextProvider.
func (h *History) PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string {
	cur := LatestInput(chain)
	if cur == nil {
		return nil
	}
	var (
		fetcher Fetcher
		ref     Ref
		tag     string
		err     error
	)
	switch cur.Source {
	case thread.PlatformSlack:
		return h.slackThreadContext(ctx, th, chain, cur)
	case thread.PlatformDiscord:
		var d *thread.DiscordAttachment
		if h.Discord == nil {
			return nil
		}
		if d, err = h.Store.DiscordAttachment(ctx, th.ID); err == nil {
			fetcher, ref, tag = h.Discord, Ref{ID: d.DiscordThreadID}, "discord_thread_context"
		}
	case thread.PlatformLinear:
		var l *thread.LinearAttachment
		if h.Linear == nil {
			return nil
		}
		if l, err = h.Store.LinearAttachment(ctx, th.ID); err == nil && l.IssueID != "" {
			fetcher, ref, tag = h.Linear, Ref{ID: l.IssueID, Workspace: l.WorkspaceID}, "linear_issue_context"
		}
	default:
		return nil // not a message in a platform thread
	}
	if fetcher == nil && (err == nil || errors.Is(err, thread.ErrNotFound)) {
		return nil
	}
	var msgs []Message
	key := string(cur.Source) + ":" + ref.ID
	switch {
	case err != nil:
	case opened(cur, ref):
		// weft opened this Discord thread on this mention moments ago, so
		// it holds nothing the chain lacks: remember it as read rather
		// than spend a call of the bot's global rate limit, which a burst
		// of mentions needs for their threads and first replies.
		h.remember(key, nil)
	default:
		msgs, err = h.fetch(ctx, key, fetcher, ref)
	}
	if err != nil {
		h.Logger.WarnContext(ctx, "thread history unavailable; answering without it",
			slog.String("thread_id", th.ID.String()), slog.String("platform", string(cur.Source)), slog.Any("error", err))
		return nil
	}
	if cur.Source == thread.PlatformDiscord {
		msgs = withDeletions(msgs, chain)
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.ID != "" && m.ID == cur.ExternalID {
			continue // the current question is marked on its own below
		}
		b.WriteString(line(m.Author, m.Text, m.Edited, m.Deleted))
	}
	if b.Len() == 0 {
		return nil
	}
	return []string{fmt.Sprintf("<%s>\n%s</%s>\nCurrent question: %s", tag, b.String(), tag, cur.Content)}
}

// withDeletions puts the Discord messages weft saw deleted back in
// their places, as deleted: Discord's history no longer returns them, and
// the conversation shows them as withdrawn, so the section does too. Only
// those within the history read (from its first message on) are placed.
func withDeletions(msgs []Message, chain []thread.Stitch) []Message {
	if len(msgs) == 0 {
		return msgs
	}
	var out []Message
	for i := range chain {
		s := &chain[i]
		if s.Source != thread.PlatformDiscord || s.DeletedAt.IsZero() || !thread.IsSnowflake(s.ExternalID) ||
			thread.CompareSnowflakes(s.ExternalID, msgs[0].ID) < 0 {
			continue
		}
		m := Message{ID: s.ExternalID, Deleted: true}
		if s.Author != nil {
			m.Author = s.Author.Name
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return msgs
	}
	for _, m := range msgs {
		if !slices.ContainsFunc(out, func(d Message) bool { return d.ID == m.ID }) {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Message) int { return thread.CompareSnowflakes(a.ID, b.ID) })
	return out
}

// opened reports whether cur is the mention a Discord thread was started
// from (the thread has the message's id): that thread's first turn.
func opened(cur *thread.Stitch, ref Ref) bool {
	return cur.Source == thread.PlatformDiscord && cur.Type == thread.StitchInitialPrompt && cur.ExternalID == ref.ID
}

// fetch returns the history of ref, from the cache while it is fresh.
func (h *History) fetch(ctx context.Context, key string, f Fetcher, ref Ref) ([]Message, error) {
	if msgs, ok := h.cache.Get(key, time.Now()); ok {
		return msgs, nil
	}
	msgs, err := f.ThreadHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	h.remember(key, msgs)
	return msgs, nil
}

// remember caches a history for the TTL.
func (h *History) remember(key string, msgs []Message) {
	ttl := h.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	h.cache.Put(key, msgs, time.Now(), ttl)
}

// LatestInput is the newest input stitch: the question being answered.
func LatestInput(chain []thread.Stitch) *thread.Stitch {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Type.IsInput() {
			return &chain[i]
		}
	}
	return nil
}

func OrUnknown(name string) string {
	if name == "" {
		return "Someone"
	}
	return name
}
