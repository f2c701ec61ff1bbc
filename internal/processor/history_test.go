package processor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
)

type discordHistory []history.Message

func (d discordHistory) ThreadHistory(context.Context, history.Ref) ([]history.Message, error) {
	return d, nil
}

// TestFollowUpSeesThreadHistory: a follow-up like "are they running?" in a
// Discord thread reaches the model with the earlier messages that say what
// "they" are.
func TestFollowUpSeesThreadHistory(t *testing.T) {
	t.Parallel()
	earlier := discordHistory{
		{ID: "100000000000000001", Author: "alice", Text: "Our build VMs are build-1 and build-2."},
		{ID: "100000000000000002", Author: "bob", Text: "cache-1 too."},
	}
	h := newHarness(t, func(r *agent.Runner, store *db.Store) {
		r.Context = append(r.Context, &history.History{Sections: map[thread.Platform]history.Section{
			thread.PlatformDiscord: surfacediscord.HistorySection(earlier, store)}, Logger: r.Logger})
	})
	h.llm.Enqueue(llmtest.Reply{Text: "build-1 and build-2 are up; cache-1 is down."})
	msgID := dbtest.Snowflake()
	th, err := h.ingest.StartThread(context.Background(), h.ingest.Builder().WithGoal("discord chat").
		InteractiveDiscord(dbtest.DiscordAttachment()).
		WithInitialPrompt(thread.Stitch{Content: "are they running?", Source: thread.PlatformDiscord, ExternalID: msgID, Author: &thread.Author{Name: "alice"}}))
	require.NoError(t, err)
	h.waitStatus(t, th.ID, thread.StatusWaiting)

	sys := h.llm.Requests()[0].System
	require.Contains(t, sys, "<discord_thread_context>\nalice: Our build VMs are build-1 and build-2.\nbob: cache-1 too.\n</discord_thread_context>")
	require.Contains(t, sys, "Current question: are they running?")
}
