package processor_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// A call with side effects whose intent is recorded, and whose turn dies
// before its result is (here: its lease is taken, as from a replica that
// stalled past it), is never made again: the turn that takes the thread up
// gives the model "the outcome of this call is unknown" instead. A
// read-only call in the same situation is simply made again.
func TestSideEffectCallIsNeverMadeTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		sideEffects bool
		calls       int32
	}{
		{"write", true, 1},
		{"read", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			var pool *db.Store
			h := newHarness(t, func(r *agent.Runner, store *db.Store) {
				pool = store
				require.NoError(t, r.Tools.Register(tools.Tool{Name: "create_issue", Schema: json.RawMessage(`{"type":"object"}`),
					SideEffects: tc.sideEffects,
					Handler: func(ctx context.Context, c tools.Call) (string, error) {
						if calls.Add(1) == 1 {
							// The replica "dies" while the call runs: its
							// lease goes to another owner, already lapsed,
							// so nothing this turn writes after now lands.
							_, err := pool.Pool().Exec(context.Background(), `UPDATE threads SET lease_owner = 'dead-replica',
								lease_expires_at = now() - interval '1 second' WHERE thread_id = $1`, c.ThreadID)
							require.NoError(t, err)
						}
						return "created ENG-1", nil
					}}))
			})
			h.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "create_issue", Arguments: `{"title":"flaky"}`}}},
				llmtest.Reply{Text: "Done."},
			)
			th := h.linearThread(t, "file an issue")
			h.waitStatus(t, th.ID, thread.StatusWaiting)
			require.Equal(t, tc.calls, calls.Load(), "calls the tool saw")
			require.Eventually(t, func() bool { return h.llm.Calls() == 2 }, 10*time.Second, 10*time.Millisecond)

			msgs := h.llm.Requests()[1].Messages
			result := msgs[len(msgs)-1]
			require.Equal(t, "tool", result.Role)
			var unknown []thread.Stitch
			for _, s := range h.chain(t, th.ID) {
				if s.Type == thread.StitchToolCall && s.Meta().Unknown {
					unknown = append(unknown, s)
				}
			}
			if tc.sideEffects {
				require.Contains(t, result.Content, "the outcome of this call is unknown: weft stopped while it ran")
				require.Len(t, unknown, 1, "the unknown outcome is marked on its stitch")
				require.True(t, unknown[0].ToolError)
			} else {
				require.Equal(t, "created ENG-1", result.Content)
				require.Empty(t, unknown)
			}
		})
	}
}
