package history_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/logtest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
)

type fetcher struct {
	msgs  []history.Message
	err   error
	calls atomic.Int32
}

func (f *fetcher) ThreadHistory(context.Context, history.Ref) ([]history.Message, error) {
	f.calls.Add(1)
	return f.msgs, f.err
}

type attachments struct{}

func (attachments) DiscordAttachment(_ context.Context, id uuid.UUID) (*thread.DiscordAttachment, error) {
	return &thread.DiscordAttachment{ThreadID: id, DiscordThreadID: "111111111111111111"}, nil
}

func (attachments) LinearAttachment(_ context.Context, id uuid.UUID) (*thread.LinearAttachment, error) {
	return &thread.LinearAttachment{ThreadID: id, IssueID: "issue-1"}, nil
}

func (attachments) SlackAttachment(_ context.Context, id uuid.UUID) (*thread.SlackAttachment, error) {
	return &thread.SlackAttachment{ThreadID: id, TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100"}, nil
}

// backfill is what a Slack thread said before weft joined it.
type backfill struct {
	msgs  []history.Message
	err   error
	calls atomic.Int32
	seen  atomic.Value // the beforeTS asked for
}

func (b *backfill) SlackThreadBefore(_ context.Context, _ *thread.SlackAttachment, before string) ([]history.Message, error) {
	b.calls.Add(1)
	b.seen.Store(before)
	return b.msgs, b.err
}

// slackChain is a Slack thread's stored chain: texts from people (ts
// 1700000000+i), weft's answer after the first, the last the question.
func slackChain(first int, texts ...string) []thread.Stitch {
	chain := []thread.Stitch{{ID: uuid.New(), Type: thread.StitchSystemPrompt, Content: "persona"}}
	for i, text := range texts {
		ts := fmt.Sprintf("17000000%02d.000100", first+i)
		chain = append(chain, thread.Stitch{ID: uuid.New(), Type: thread.StitchSlackMessage, Content: text,
			Source: thread.PlatformSlack, ExternalID: "T1/C1/" + ts})
		if i == 0 {
			chain = append(chain, thread.Stitch{ID: uuid.New(), Type: thread.StitchLLMCall, Content: "Noted."})
		}
	}
	return chain
}

// newHistory is History with each platform's section as the app builds
// it, over the given readers: Discord's and Linear's only when given.
func newHistory(t *testing.T, discord, linear history.Fetcher, slack surfaceslack.SlackBackfill) *history.History {
	sections := map[thread.Platform]history.Section{thread.PlatformSlack: &surfaceslack.SlackSection{Backfill: slack, Store: attachments{}}}
	if discord != nil {
		sections[thread.PlatformDiscord] = surfacediscord.HistorySection(discord, attachments{})
	}
	if linear != nil {
		sections[thread.PlatformLinear] = surfacelinear.HistorySection(linear, attachments{})
	}
	return &history.History{Sections: sections, Logger: logtest.New(t)}
}

// TestSlackThreadContext is thread-context-retrieval.md for Slack.
func TestSlackThreadContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := &thread.Thread{ID: uuid.New(), AgentName: "weft"}

	t.Run("StoredHistoryNoAPICall", func(t *testing.T) {
		t.Parallel()
		b := &backfill{}
		h := newHistory(t, nil, nil, b)
		secs := h.PromptSections(ctx, th, slackChain(0, "<@U0WEFT> we run build-1 and cache-1", "are they running?"))
		require.Equal(t, []string{"<slack_thread_context>\nUser: <@U0WEFT> we run build-1 and cache-1\nweft: Noted.\n</slack_thread_context>\nCurrent question: are they running?"}, secs)
		require.Zero(t, b.calls.Load(), "weft saw the whole thread: nothing read from Slack")
	})

	t.Run("JoinedMidThreadBackfillsOnceCached", func(t *testing.T) {
		t.Parallel()
		b := &backfill{msgs: []history.Message{{Author: "User", Text: "build-2 is down"}}}
		h := newHistory(t, nil, nil, b)
		secs := h.PromptSections(ctx, th, slackChain(5, "<@U0WEFT> why?", "is it back?"))
		require.Equal(t, []string{"<slack_thread_context>\nUser: build-2 is down\nUser: <@U0WEFT> why?\nweft: Noted.\n</slack_thread_context>\nCurrent question: is it back?"}, secs)
		require.Equal(t, "1700000005.000100", b.seen.Load(), "only what came before weft's first message")
		h.PromptSections(ctx, th, slackChain(5, "<@U0WEFT> why?", "is it back?", "and now?"))
		require.EqualValues(t, 1, b.calls.Load(), "the second turn used the cache")
	})

	t.Run("OutsideAThreadNoSection", func(t *testing.T) {
		t.Parallel()
		b := &backfill{}
		h := newHistory(t, nil, nil, b)
		require.Empty(t, h.PromptSections(ctx, th, slackChain(0, "<@U0WEFT> hello")))
		require.Zero(t, b.calls.Load())
	})

	t.Run("BackfillFailureLoggedAndSkipped", func(t *testing.T) {
		t.Parallel()
		h := newHistory(t, nil, nil, &backfill{err: errors.New("ratelimited")})
		secs := h.PromptSections(ctx, th, slackChain(5, "<@U0WEFT> why?", "is it back?"))
		require.Equal(t, []string{"<slack_thread_context>\nUser: <@U0WEFT> why?\nweft: Noted.\n</slack_thread_context>\nCurrent question: is it back?"}, secs)
	})
}

func chainWith(source thread.Platform, text, id string) []thread.Stitch {
	return []thread.Stitch{
		{Type: thread.StitchSystemPrompt, Content: "persona"},
		{Type: thread.StitchDiscordMessage, Content: text, Source: source, ExternalID: id},
	}
}

func TestHistorySections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := &thread.Thread{ID: uuid.New()}
	vms := []history.Message{
		{ID: "1", Author: "alice", Text: "We run three VMs: build-1, build-2 and cache-1."},
		{ID: "2", Author: "weft", Text: "Noted."},
		{ID: "3", Author: "alice", Text: "are they running?"},
	}

	t.Run("DiscordThreadHistoryAndCurrentQuestion", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: vms}
		h := newHistory(t, f, nil, nil)
		secs := h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "are they running?", "3"))
		require.Len(t, secs, 1)
		require.Equal(t, "<discord_thread_context>\nalice: We run three VMs: build-1, build-2 and cache-1.\nweft: Noted.\n</discord_thread_context>\nCurrent question: are they running?", secs[0])

		h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "and now?", "4"))
		require.EqualValues(t, 1, f.calls.Load(), "the second turn used the cache")
	})

	t.Run("ThreadOpenedOnTheMentionIsNotRead", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: vms}
		h := newHistory(t, f, nil, nil)
		mention := chainWith(thread.PlatformDiscord, "why is the build red?", "111111111111111111")
		mention[1].Type = thread.StitchInitialPrompt
		require.Empty(t, h.PromptSections(ctx, th, mention))
		require.Zero(t, f.calls.Load(), "the thread weft just opened on the mention holds nothing older")
		// Its follow-ups within the TTL reuse that, as they would a read.
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "and now?", "111111111111111112")))
		require.Zero(t, f.calls.Load())

		// A mention in a thread weft did not open on it (a continued
		// conversation's thread) is read.
		other := chainWith(thread.PlatformDiscord, "go on", "211111111111111111")
		other[1].Type = thread.StitchInitialPrompt
		require.Len(t, newHistory(t, f, nil, nil).PromptSections(ctx, th, other), 1)
		require.EqualValues(t, 1, f.calls.Load())
	})

	t.Run("LinearIssueComments", func(t *testing.T) {
		t.Parallel()
		h := newHistory(t, nil, &fetcher{msgs: vms[:1]}, nil)
		secs := h.PromptSections(ctx, th, chainWith(thread.PlatformLinear, "are they running?", "act-9"))
		require.Len(t, secs, 1)
		require.Contains(t, secs[0], "<linear_issue_context>\nalice: We run three VMs")
	})

	t.Run("NotInAPlatformThread", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: vms}
		h := newHistory(t, f, f, nil)
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformCLI, "hi", "")))
		require.Zero(t, f.calls.Load(), "nothing fetched outside a thread")
	})

	t.Run("APIFailureGoesOnWithout", func(t *testing.T) {
		t.Parallel()
		h := newHistory(t, &fetcher{err: errors.New("503")}, nil, nil)
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "hi", "9")))
	})

	t.Run("EmptyHistoryAddsNoSection", func(t *testing.T) {
		t.Parallel()
		h := newHistory(t, &fetcher{msgs: vms[2:]}, nil, nil)
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "are they running?", "3")))
	})
}

// Every history section shows edits and deletions alike, as the
// conversation does: "name: text [edited]", "name: [this message was
// deleted]".
func TestHistoryMarksEditsAndDeletions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := &thread.Thread{ID: uuid.New(), AgentName: "weft"}

	t.Run("SlackStored", func(t *testing.T) {
		t.Parallel()
		chain := slackChain(0, "we run build-1", "and cache-1", "oops, wrong thread", "are they running?")
		chain[1].Author = &thread.Author{ID: "U0ALICE", Name: "alice"}
		chain[3].Author, chain[3].EditedAt = &thread.Author{ID: "U0ALICE", Name: "alice"}, time.Now()
		chain[4].Author, chain[4].DeletedAt = &thread.Author{ID: "U0BOB", Name: "bob"}, time.Now()
		secs := newHistory(t, nil, nil, nil).PromptSections(ctx, th, chain)
		require.Equal(t, []string{"<slack_thread_context>\nalice: we run build-1\nweft: Noted.\nalice: and cache-1 [edited]\nbob: [this message was deleted]\n" +
			"</slack_thread_context>\nCurrent question: are they running?"}, secs)
	})

	t.Run("SlackBeforeWeftJoined", func(t *testing.T) {
		t.Parallel()
		b := &backfill{msgs: []history.Message{{Author: "dave", Deleted: true}, {Author: "carol", Text: "build-2 is down", Edited: true}}}
		secs := newHistory(t, nil, nil, b).PromptSections(ctx, th, slackChain(5, "why?", "is it back?"))
		require.Equal(t, []string{"<slack_thread_context>\ndave: [this message was deleted]\ncarol: build-2 is down [edited]\nUser: why?\nweft: Noted.\n" +
			"</slack_thread_context>\nCurrent question: is it back?"}, secs)
	})

	t.Run("Discord", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: []history.Message{
			{ID: "211111111111111111", Author: "alice", Text: "We run build-1.", Edited: true},
			{ID: "211111111111111113", Author: "weft", Text: "Noted."},
			{ID: "211111111111111114", Author: "alice", Text: "are they running?"},
		}}
		chain := chainWith(thread.PlatformDiscord, "are they running?", "211111111111111114")
		// weft recorded a message Discord no longer returns as deleted.
		chain = append(chain[:1], thread.Stitch{Type: thread.StitchDiscordMessage, Source: thread.PlatformDiscord, ExternalID: "211111111111111112",
			Content: "and cache-1", Author: &thread.Author{ID: "9", Name: "bob"}, DeletedAt: time.Now()}, chain[1])
		secs := newHistory(t, f, nil, nil).PromptSections(ctx, th, chain)
		require.Equal(t, []string{"<discord_thread_context>\nalice: We run build-1. [edited]\nbob: [this message was deleted]\nweft: Noted.\n" +
			"</discord_thread_context>\nCurrent question: are they running?"}, secs)
	})

	t.Run("Linear", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: []history.Message{{ID: "c1", Author: "alice", Text: "We run build-1.", Edited: true}}}
		secs := newHistory(t, nil, f, nil).PromptSections(ctx, th, chainWith(thread.PlatformLinear, "are they running?", "act-9"))
		require.Equal(t, []string{"<linear_issue_context>\nalice: We run build-1. [edited]\n</linear_issue_context>\nCurrent question: are they running?"}, secs)
	})
}
