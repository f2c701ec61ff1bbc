package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
)

// TestBusyThreadWaitsForTheLease checks how a turn job for new input waits
// on a thread another turn holds (one waiting out a model outage, or on a
// replica that died): it looks again when the holder's lease would lapse,
// not every LeaseWait, and never more than 5 s later, so that the job stays
// available to every replica rather than waiting on the leader's scheduler.
func TestBusyThreadWaitsForTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// No sweep: the input's own job must be what answers it.
	h := newHarnessConfig(t, func(c *processor.Config) { c.SweepInterval = time.Hour })
	h.waitRan(t, "weft_sweep") // the one on the leader's start
	h.llm.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"answered"}`}}}
	})
	// held makes a thread whose turn another owner holds for lease, and
	// gives it new input (and so a turn job).
	held := func(t *testing.T, lease time.Duration) *thread.Thread {
		th := dbtest.Thread(ctx, t, h.store, nil)
		_, err := h.pool.Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = 'another-turn',
			lease_expires_at = now() + $2 * interval '1 millisecond' WHERE thread_id = $1`, th.ID, lease.Milliseconds())
		require.NoError(t, err)
		_, err = h.ingest.AddInput(ctx, th.ID, thread.Stitch{Type: thread.StitchInitialPrompt, Content: "one more thing"})
		require.NoError(t, err)
		return th
	}
	// turnJob is the state of the thread's one turn job, how often it was
	// snoozed, and whether it is due within 5 s.
	turnJob := func(t *testing.T, th *thread.Thread) (state string, snoozes int, soon bool) {
		var jobs int
		require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*) OVER (), state, coalesce((metadata->>'snoozes')::int, 0),
			scheduled_at <= now() + interval '5 seconds' FROM river_job WHERE kind = 'weft_turn' AND args->>'thread_id' = $1`,
			th.ID.String()).Scan(&jobs, &state, &snoozes, &soon))
		require.Equal(t, 1, jobs, "the input's turn job, and no other")
		return state, snoozes, soon
	}

	t.Run("LapsingLease", func(t *testing.T) {
		t.Parallel()
		// Looking every LeaseWait (20 ms here) took over 10 looks.
		th := held(t, 3*time.Second)
		h.waitStatus(t, th.ID, thread.StatusCompleted)
		var snoozes int
		require.Eventually(t, func() bool {
			var state string
			state, snoozes, _ = turnJob(t, th)
			return state == "completed"
		}, 20*time.Second, 10*time.Millisecond, "the turn job never completed")
		require.LessOrEqual(t, snoozes, 3, "the job looked again before the lease would lapse")
	})

	t.Run("LongLease", func(t *testing.T) {
		t.Parallel()
		th := held(t, time.Hour)
		var (
			state string
			soon  bool
		)
		require.Eventually(t, func() bool {
			var snoozes int
			state, snoozes, soon = turnJob(t, th)
			return snoozes > 0 && state != "running"
		}, 20*time.Second, 10*time.Millisecond, "the job never found the thread busy")
		require.Equal(t, "available", state, "left to the leader's scheduler")
		require.True(t, soon, "the job looks again more than 5 s later")
		// The holder gives up its lease without answering (its replica was
		// stopped, say): the waiting job answers within those 5 s.
		_, err := h.pool.Exec(ctx, `UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL WHERE thread_id = $1`, th.ID)
		require.NoError(t, err)
		h.waitStatus(t, th.ID, thread.StatusCompleted)
		turnJob(t, th)
	})
}
