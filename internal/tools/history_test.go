package tools_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

type fetcher struct {
	msgs  []tools.HistoryMessage
	err   error
	calls atomic.Int32
}

func (f *fetcher) ThreadHistory(context.Context, tools.HistoryRef) ([]tools.HistoryMessage, error) {
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
	vms := []tools.HistoryMessage{
		{ID: "1", Author: "alice", Text: "We run three VMs: build-1, build-2 and cache-1."},
		{ID: "2", Author: "weft", Text: "Noted."},
		{ID: "3", Author: "alice", Text: "are they running?"},
	}

	t.Run("DiscordThreadHistoryAndCurrentQuestion", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: vms}
		h := &tools.History{Discord: f, Store: attachments{}, Logger: logtest.New(t)}
		secs := h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "are they running?", "3"))
		require.Len(t, secs, 1)
		require.Equal(t, "<discord_thread_context>\nalice: We run three VMs: build-1, build-2 and cache-1.\nweft: Noted.\n</discord_thread_context>\nCurrent question: are they running?", secs[0])

		h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "and now?", "4"))
		require.EqualValues(t, 1, f.calls.Load(), "the second turn used the cache")
	})

	t.Run("LinearIssueComments", func(t *testing.T) {
		t.Parallel()
		h := &tools.History{Linear: &fetcher{msgs: vms[:1]}, Store: attachments{}, Logger: logtest.New(t)}
		secs := h.PromptSections(ctx, th, chainWith(thread.PlatformLinear, "are they running?", "act-9"))
		require.Len(t, secs, 1)
		require.Contains(t, secs[0], "<linear_issue_context>\nalice: We run three VMs")
	})

	t.Run("NotInAPlatformThread", func(t *testing.T) {
		t.Parallel()
		f := &fetcher{msgs: vms}
		h := &tools.History{Discord: f, Linear: f, Store: attachments{}, Logger: logtest.New(t)}
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformCLI, "hi", "")))
		require.Zero(t, f.calls.Load(), "nothing fetched outside a thread")
	})

	t.Run("APIFailureGoesOnWithout", func(t *testing.T) {
		t.Parallel()
		h := &tools.History{Discord: &fetcher{err: errors.New("503")}, Store: attachments{}, Logger: logtest.New(t)}
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "hi", "9")))
	})

	t.Run("EmptyHistoryAddsNoSection", func(t *testing.T) {
		t.Parallel()
		h := &tools.History{Discord: &fetcher{msgs: vms[2:]}, Store: attachments{}, Logger: logtest.New(t)}
		require.Empty(t, h.PromptSections(ctx, th, chainWith(thread.PlatformDiscord, "are they running?", "3")))
	})
}
