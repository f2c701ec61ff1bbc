package processor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
)

// A model that stays unavailable for longer than a turn's attempts last
// (429 with Retry-After, 529 overloaded, 5xx) is waited out: the turn job
// snoozes, which spends none of its attempts, the surface is told once that
// the model is busy, and the answer follows when the model is back.
func TestModelOutageIsRiddenOut(t *testing.T) {
	t.Parallel()
	// More snoozes than a turn has attempts: each costs a job attempt
	// if a snooze is taken for a failure.
	const outages = job.TurnMaxAttempts + 2
	for _, tt := range []struct {
		name, provider string
		fault          llmtest.Reply
	}{
		// Retry-After of a millisecond: the header says 1 (second), the
		// millisecond header wins, and the test does not sleep.
		{"429 openai", "openai", llmtest.Reply{Status: 429, RetryAfter: time.Millisecond}},
		{"529 anthropic", "anthropic", llmtest.Reply{Status: 529}},
		{"503 openai", "openai", llmtest.Reply{Status: 503}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newHarnessProvider(t, tt.provider, nil)
			// The harness's adapter tries each call three times.
			for range 3 * outages {
				h.llm.Enqueue(tt.fault)
			}
			h.llm.Enqueue(llmtest.Reply{Text: "back again"})
			th := h.linearThread(t, "hello")

			h.waitStatus(t, th.ID, thread.StatusWaiting)
			require.Equal(t, 3*outages+1, h.llm.Calls())
			chain := h.chain(t, th.ID)
			require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt,
				thread.StitchAgentThought, thread.StitchLLMCall}, types(chain))
			require.Equal(t, agent.BusyNotice, chain[2].Content)
			require.NotNil(t, chain[2].Meta().ModelBusySince)
			h.waitSent(t, th.ID, 2)
			require.Equal(t, []thread.OutboxKind{thread.OutboxNotice, thread.OutboxResponse}, h.sender.kinds(th.ID), "one notice, then the answer")

			// River marks the job completed shortly after the turn's last write.
			var attempt, snoozes int
			require.Eventually(t, func() bool {
				return h.pool.QueryRow(ctx, `SELECT attempt, coalesce((metadata->>'snoozes')::int, 0) FROM river_job
					WHERE kind = 'weft_turn' AND state = 'completed' AND args->>'thread_id' = $1`, th.ID.String()).Scan(&attempt, &snoozes) == nil
			}, 20*time.Second, 10*time.Millisecond, "the turn job never completed")
			require.Equal(t, 1, attempt, "snoozes spend no attempts")
			require.GreaterOrEqual(t, snoozes, outages)
		})
	}
}

// Past the retry window the thread fails as any failed turn does: an error
// stitch naming the cause, the error on the surface. The window is measured
// by the agent's clock, moved on by the test.
func TestModelOutagePastTheWindowFails(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	h := newHarness(t, func(r *agent.Runner, _ *db.Store) {
		r.RetryWindow = time.Hour
		r.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	h.llm.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 429, RetryAfter: time.Millisecond} })
	th := h.linearThread(t, "hello")

	require.Eventually(t, func() bool {
		for _, s := range h.chain(t, th.ID) {
			if s.Meta().ModelBusySince != nil {
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "no busy notice")
	cur, err := h.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusRunning, cur.Status, "waiting out the outage")
	skew.Store(int64(time.Hour))

	failed := h.waitStatus(t, th.ID, thread.StatusFailed)
	require.Equal(t, "The language model stayed unavailable for 1h0m0s (rate limited, HTTP 429); the turn failed.", failed.Error)
	chain := h.chain(t, th.ID)
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt,
		thread.StitchAgentThought, thread.StitchError}, types(chain))
	h.waitSent(t, th.ID, 2)
	require.Equal(t, []thread.OutboxKind{thread.OutboxNotice, thread.OutboxError}, h.sender.kinds(th.ID))
}

// What retrying cannot fix fails the thread on the first call, with a
// message that names the cause.
func TestUnfixableModelErrorsFailAtOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, provider string
		fault          llmtest.Reply
		want           string
	}{
		{"401 openai", "openai", llmtest.Reply{Status: 401},
			"The language model refused weft's credentials (auth error, HTTP 401); check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY). The turn failed."},
		{"401 anthropic", "anthropic", llmtest.Reply{Status: 401},
			"The language model refused weft's credentials (auth error, HTTP 401); check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY). The turn failed."},
		{"400 invalid", "openai", llmtest.Reply{Status: 400, ErrorMessage: "Invalid value for 'model'"},
			"Invalid value for 'model'"},
		{"context too long openai", "openai", llmtest.Reply{Status: 400, ErrorMessage: "This model's maximum context length is 128000 tokens."},
			"The conversation is too long for the model's context window; the turn failed. Start a new thread, or use a model with a larger context."},
		{"context too long anthropic", "anthropic", llmtest.Reply{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"},
			"The conversation is too long for the model's context window; the turn failed. Start a new thread, or use a model with a larger context."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessProvider(t, tt.provider, nil)
			h.llm.Enqueue(tt.fault)
			th := h.linearThread(t, "hello")
			failed := h.waitStatus(t, th.ID, thread.StatusFailed)
			require.Contains(t, failed.Error, tt.want)
			require.Equal(t, 1, h.llm.Calls())
			require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt, thread.StitchError}, types(h.chain(t, th.ID)))
			h.waitSent(t, th.ID, 1)
			require.Equal(t, []thread.OutboxKind{thread.OutboxError}, h.sender.kinds(th.ID))
		})
	}
}
