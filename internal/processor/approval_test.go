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
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// A call needing approval waits; approved, it runs once and the model
// answers; denied or timed out, it never runs and the model is told why.
func TestApprovalLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		decide  func(ctx context.Context, h *harness, d *approval.Decider, a thread.Approval) error
		calls   int32
		modelIn string
	}{
		{"Approved", func(ctx context.Context, h *harness, d *approval.Decider, a thread.Approval) error {
			_, err := d.Decide(ctx, approval.Request{ApprovalID: a.ID, Decision: thread.Approve, By: approval.Who{ID: "api", Via: approval.ViaAPI}})
			return err
		}, 1, "written"},
		{"Denied", func(ctx context.Context, h *harness, d *approval.Decider, a thread.Approval) error {
			_, err := d.Decide(ctx, approval.Request{ApprovalID: a.ID, Decision: thread.Deny, Reason: "not that file",
				By: approval.Who{ID: "api", Name: "the API", Via: approval.ViaAPI}})
			return err
		}, 0, "error: this call was not made: denied by the API (api): not that file"},
		{"TimedOut", func(ctx context.Context, h *harness, d *approval.Decider, a thread.Approval) error {
			_, err := d.Store.Pool().Exec(ctx, `UPDATE approvals SET expires_at = now() - interval '1 second' WHERE approval_id = $1`, a.ID)
			if err != nil {
				return err
			}
			_, err = d.Expire(ctx)
			return err
		}, 0, "no one approved it within"},
		{"LinearSelectApproves", func(ctx context.Context, h *harness, _ *approval.Decider, a thread.Approval) error {
			// A chat message that decides nothing leaves the thread waiting.
			_, err := h.ingest.AddInput(ctx, a.ThreadID, thread.Stitch{Type: thread.StitchLinearActivity, Content: "any news?",
				Source: thread.PlatformLinear, ExternalID: "act-wait", Author: &thread.Author{ID: "u-ada", Name: "ada"}})
			if err != nil {
				return err
			}
			// Linear's select sends the option chosen as the prompt's body.
			_, err = h.ingest.AddInput(ctx, a.ThreadID, thread.Stitch{Type: thread.StitchLinearActivity, Content: "Approve",
				Source: thread.PlatformLinear, ExternalID: "act-approve", Author: &thread.Author{ID: "u-ada", Name: "ada"}})
			return err
		}, 1, "written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			replies := &replyDecider{}
			h := newHarness(t, func(r *agent.Runner, _ *db.Store) {
				r.Approvals = replies
				require.NoError(t, r.Tools.Register(tools.Tool{Name: "mcp__files__write_file", Schema: json.RawMessage(`{"type":"object"}`),
					SideEffects: true, NeedsApproval: true, Server: "files", ServerTool: "write_file",
					Handler: func(context.Context, tools.Call) (string, error) { calls.Add(1); return "written", nil }}))
			})
			h.llm.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__files__write_file", Arguments: `{"path":"a.txt"}`}}},
				llmtest.Reply{Text: "Done."},
			)
			th := h.linearThread(t, "write a.txt")
			waiting := h.waitStatus(t, th.ID, thread.StatusWaiting)
			require.Equal(t, thread.WaitingApproval, waiting.WaitingReason)
			rows := h.waitSent(t, th.ID, 1)
			body, err := rows[len(rows)-1].Content()
			require.NoError(t, err)
			require.NotNil(t, body.Approval)
			require.Equal(t, "write_file", body.Approval.Tool)
			list, err := h.store.ThreadApprovals(context.Background(), th.ID)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Zero(t, calls.Load())

			d := &approval.Decider{Store: h.store, Jobs: h.proc.Inserter()}
			replies.d = d
			require.NoError(t, tc.decide(context.Background(), h, d, list[0]))
			require.Eventually(t, func() bool { return h.llm.Calls() == 2 }, 20*time.Second, 10*time.Millisecond)
			done := h.waitStatus(t, th.ID, thread.StatusWaiting)
			require.Equal(t, thread.WaitingIdle, done.WaitingReason)
			require.Equal(t, tc.calls, calls.Load())
			var result string
			for _, m := range h.llm.Requests()[1].Messages {
				if m.Role == "tool" {
					result = m.Content
				}
			}
			require.Contains(t, result, tc.modelIn, "the call's result as the model read it")
		})
	}
}

// replyDecider is app's adapter: replies decide through the Decider.
type replyDecider struct{ d *approval.Decider }

func (r *replyDecider) DecideReply(ctx context.Context, d agent.ReplyDecision) (*thread.Approval, error) {
	return r.d.Decide(ctx, approval.Request{ApprovalID: d.ApprovalID, Decision: d.Decision, Reason: d.Reason,
		By: approval.Who{ID: d.By.ID, Name: d.By.Name, Via: string(d.Via)}})
}
