package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// TestRefusedEchoLeavesTheThreadAnswered: an echo the platform refuses for
// good is noted on the thread, but the thread, whose answer went out where
// the question was asked, stays waiting rather than failing.
func TestRefusedEchoLeavesTheThreadAnswered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarnessConfig(t, func(c *processor.Config) {
		c.Echo = outbox.Echo{Policies: map[thread.Platform]thread.EchoPolicy{thread.PlatformLinear: thread.EchoAnswers}, Idle: time.Hour}
	})
	th := h.linearThread(t, "why is the build red?")
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	att := dbtest.DiscordAttachment()
	att.ThreadID = th.ID
	require.NoError(t, h.store.AttachDiscord(ctx, *att)) // as continuing in Discord does
	before := len(h.waitSent(t, th.ID, 1))
	h.sender.mu.Lock()
	h.sender.refuseEchoes = true
	h.sender.mu.Unlock()

	_, err := h.ingest.Record(ctx, surface.Event{Kind: surface.Message, Conversation: att, Answer: true,
		Inbound: thread.Inbound{Platform: thread.PlatformDiscord, EventType: "MESSAGE_CREATE", Action: "message"},
		Messages: []thread.Stitch{{Type: thread.StitchDiscordMessage, ExternalID: dbtest.Snowflake(), Content: "and now?",
			Author: &thread.Author{ID: "1", Name: "ada"}}}})
	require.NoError(t, err)
	rows := h.waitSent(t, th.ID, before+2)
	var answer, echo *thread.Outbox
	for i, o := range rows[before:] {
		b, err := o.Content()
		require.NoError(t, err)
		if b.Echo {
			echo = &rows[before+i]
		} else if o.Kind == thread.OutboxResponse {
			answer = &rows[before+i]
		}
	}
	require.NotNil(t, answer)
	require.NotNil(t, echo)
	require.Equal(t, thread.PlatformDiscord, answer.Platform)
	require.Equal(t, thread.OutboxSent, answer.Status)
	require.Equal(t, thread.PlatformLinear, echo.Platform)
	require.Equal(t, thread.OutboxFailed, echo.Status)

	got := h.waitStatus(t, th.ID, thread.StatusWaiting)
	require.Empty(t, got.Error)
	chain := h.chain(t, th.ID)
	last := chain[len(chain)-1]
	require.Equal(t, thread.StitchError, last.Type, "the refusal is noted")
	require.Equal(t, echo.ID.String(), last.Meta().OutboxID)
}
