// Package history puts a conversation's platform thread history in the
// prompt: History (an agent.ContextProvider) asks the Section of the
// platform the question came from, each platform's in its seam folder,
// and caches what a platform's API returned for a TTL. Fetched is the
// section of a platform whose history a Fetcher reads.
package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// Message is one message of a platform thread's history.
type Message struct {
	ID     string
	Author string
	Text   string
	// Edited and Deleted say the platform reports the message edited, or
	// deleted (a tombstone); every history section marks them alike.
	Edited, Deleted bool
}

// DeletedMessage stands in for a deleted message's text, as in the
// conversation itself: the model sees that something was said and
// withdrawn, not a silent gap.
const DeletedMessage = "[this message was deleted]"

// editedMark follows an edited message's latest text.
const editedMark = " [edited]"

// Line is one message of a history section, thread-context-retrieval.md's
// "User: message text": its author's name (else "User"), its text on one
// line, marked when edited, or the placeholder once deleted. Empty when
// there is nothing to show.
func Line(who, text string, edited, deleted bool) string {
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

// Ref names a platform thread: its id, with the workspace whose token
// reads it where the platform needs one.
type Ref struct {
	ID        string
	Workspace string
}

// Fetcher reads a platform thread's messages, oldest first: a thread's
// messages, an issue's comments.
type Fetcher interface {
	ThreadHistory(ctx context.Context, ref Ref) ([]Message, error)
}

// DefaultTTL is how long a fetched history is reused: long enough
// that a quick back-and-forth costs one API call, short enough that a
// thread's new messages show up within minutes.
const DefaultTTL = 5 * time.Minute

// Section is a platform's history section: the prompt sections for th
// whose newest input, cur, came from the platform; none when it has none.
// h is the History asking, for its cache and logger.
type Section interface {
	Section(ctx context.Context, h *History, th *thread.Thread, chain []thread.Stitch, cur *thread.Stitch) []string
}

// History puts the platform thread's history in the system prompt, in its
// own tagged section, with the current question marked apart, so the model
// can resolve "they" in "are they running?" to what the thread named.
type History struct {
	// Sections are the platforms' sections, by platform; a platform
	// without one has no history in the prompt.
	Sections map[thread.Platform]Section
	TTL      time.Duration
	Logger   *slog.Logger

	cache ttlcache.Cache[[]Message]
}

// PromptSections implements agent.ContextProvider.
func (h *History) PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string {
	cur := LatestInput(chain)
	if cur == nil {
		return nil
	}
	s := h.Sections[cur.Source]
	if s == nil {
		return nil // not a message in a platform thread
	}
	return s.Section(ctx, h, th, chain, cur)
}

// Fetched is the section of a platform whose thread history a Fetcher
// reads (a thread's messages, an issue's comments): the messages in a
// section tagged Tag, but the current question, marked apart.
type Fetched struct {
	Fetcher Fetcher
	Tag     string
	// Ref names the platform thread th is attached to; ok is false when
	// there is none, and a missing attachment may fail wrapping
	// thread.ErrNotFound.
	Ref func(ctx context.Context, th *thread.Thread) (ref Ref, ok bool, err error)
	// Opened reports that cur opened the platform thread moments ago, so
	// it holds nothing the chain lacks: it is remembered as read, not
	// read. Nil: never.
	Opened func(cur *thread.Stitch, ref Ref) bool
	// Amend puts back what the platform's history no longer returns but
	// the chain knows (deleted messages). Nil: nothing.
	Amend func(msgs []Message, chain []thread.Stitch) []Message
}

// Section implements Section.
func (f *Fetched) Section(ctx context.Context, h *History, th *thread.Thread, chain []thread.Stitch, cur *thread.Stitch) []string {
	ref, ok, err := f.Ref(ctx, th)
	if !ok && (err == nil || errors.Is(err, thread.ErrNotFound)) {
		return nil
	}
	var msgs []Message
	key := string(cur.Source) + ":" + ref.ID
	switch {
	case err != nil:
	case f.Opened != nil && f.Opened(cur, ref):
		// The platform thread was opened on this very input moments ago:
		// remember it as read rather than spend a call of the platform's
		// rate limit, which a burst of new threads needs for their first
		// replies.
		h.Remember(key, nil)
	default:
		msgs, err = h.Fetch(ctx, key, f.Fetcher, ref)
	}
	if err != nil {
		h.Logger.WarnContext(ctx, "thread history unavailable; answering without it",
			slog.String("thread_id", th.ID.String()), slog.String("platform", string(cur.Source)), slog.Any("error", err))
		return nil
	}
	if f.Amend != nil {
		msgs = f.Amend(msgs, chain)
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.ID != "" && m.ID == cur.ExternalID {
			continue // the current question is marked on its own below
		}
		b.WriteString(Line(m.Author, m.Text, m.Edited, m.Deleted))
	}
	if b.Len() == 0 {
		return nil
	}
	return []string{fmt.Sprintf("<%s>\n%s</%s>\nCurrent question: %s", f.Tag, b.String(), f.Tag, cur.Content)}
}

// Fetch returns the history of ref, from the cache under key while it is
// fresh.
func (h *History) Fetch(ctx context.Context, key string, f Fetcher, ref Ref) ([]Message, error) {
	if msgs, ok := h.cache.Get(key, time.Now()); ok {
		return msgs, nil
	}
	msgs, err := f.ThreadHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	h.Remember(key, msgs)
	return msgs, nil
}

// Remember caches a history under key for the TTL.
func (h *History) Remember(key string, msgs []Message) {
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

// OrUnknown is an author's name, or "Someone" when it is not known.
func OrUnknown(name string) string {
	if name == "" {
		return "Someone"
	}
	return name
}

// isAnswer is a message weft said in the thread: an LLM call's text that
// asked for no tool, or an agent thought.
func isAnswer(s *thread.Stitch) bool {
	switch s.Type {
	case thread.StitchLLMCall:
		return s.Content != "" && !strings.Contains(string(s.LLMResponse), `"tool_calls":[{`)
	case thread.StitchAgentThought, thread.StitchClarificationRequest:
		return s.Content != ""
	}
	return false
}

// StoredLine is a stored message as a history line: a person's by their
// name (where the platform's ingest names people), weft's by the agent's; edited and
// deleted ones marked as every history section marks them. "" for what is
// no message (tool calls, system prompts).
func StoredLine(s *thread.Stitch, agent string) string {
	switch {
	case s.Type.IsInput():
		who := ""
		if s.Author != nil {
			who = s.Author.Name
		}
		return Line(who, s.Content, !s.EditedAt.IsZero(), !s.DeletedAt.IsZero())
	case isAnswer(s):
		return Line(agent, s.Content, false, false)
	}
	return ""
}

// AppendLine appends l to lines unless it is empty.
func AppendLine(lines []string, l string) []string {
	if l == "" {
		return lines
	}
	return append(lines, l)
}
