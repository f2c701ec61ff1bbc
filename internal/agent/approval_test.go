package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

func asked(id string) thread.Stitch {
	return thread.Stitch{Type: thread.StitchApprovalRequest, Metadata: thread.Meta{ApprovalFor: id}.JSON()}
}

func decided(id string, d thread.Decision, text string) thread.Stitch {
	return thread.Stitch{Type: thread.StitchApprovalDecision, Content: text, Metadata: thread.Meta{ApprovalFor: id, Decision: d}.JSON()}
}

func intent(id string) thread.Stitch {
	return thread.Stitch{Type: thread.StitchToolCall, Metadata: thread.Meta{IntentOf: id}.JSON()}
}

func TestNextStepWithApprovals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		chain []thread.Stitch
		kind  stepKind
		calls []string
	}{
		{"WaitsForTheDecision", chain(system, prompt, call(2, "", tc1), asked("c1")), stepDone, nil},
		{"InputWaitsToo", chain(system, prompt, call(2, "", tc1), asked("c1"), input("hurry")), stepDone, nil},
		{"DecidedRunsTheCall", chain(system, prompt, call(2, "", tc1), asked("c1"), decided("c1", thread.Approve, "approved")), stepRunTools, []string{"c1"}},
		{"WaitsAfterAnEarlierResult", chain(system, prompt, call(2, "", tc1, tc2), result("c1", "x"), asked("c2")), stepDone, nil},
		{"IntentIsNoResult", chain(system, prompt, call(2, "", tc1), intent("c1")), stepRunTools, []string{"c1"}},
		{"ResultAfterIntent", chain(system, prompt, call(2, "", tc1), intent("c1"), result("c1", "x")), stepCallLLM, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := nextStep(tt.chain)
			require.Equal(t, tt.kind, p.kind)
			var ids []string
			for _, c := range p.calls {
				ids = append(ids, c.ID)
			}
			require.Equal(t, tt.calls, ids)
		})
	}
}

// A call that needs approval is not made until it is approved: the step
// asks (a request stitch, its row, the question with Approve / Deny, the
// thread waiting for approval); an approval makes the call once, its
// intent recorded first; a denial gives the model the decision instead.
func TestToolNeedingApproval(t *testing.T) {
	t.Parallel()
	called := map[string]int{}
	handler := func(name string) tools.Handler {
		return func(context.Context, tools.Call) (string, error) { called[name]++; return "done", nil }
	}
	reg, err := tools.NewRegistry()
	require.NoError(t, err)
	reg.AddSource(func() []tools.Tool {
		return []tools.Tool{
			{Name: "mcp__s__write", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler("write"), SideEffects: true,
				NeedsApproval: true, Server: "s", ServerTool: "write"},
			{Name: "mcp__s__read", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler("read")},
		}
	})
	r := &Runner{Tools: reg, Logger: logtest.New(t)}
	th := &thread.Thread{ID: uuid.New(), Type: thread.TypeInteractive}
	write := llm.ToolCall{ID: "w", Name: "mcp__s__write", Arguments: json.RawMessage(`{"title":"ENG-1 is flaky"}`)}
	read := llm.ToolCall{ID: "r", Name: "mcp__s__read", Arguments: json.RawMessage(`{}`)}
	base := chain(system, prompt, call(2, "", read, write))
	store := memStore{j: &journal{}}

	e, _, done, err := r.runTools(t.Context(), th, store, base, []llm.ToolCall{read, write})
	require.NoError(t, err)
	require.True(t, done)
	require.Equal(t, map[string]int{"read": 1}, called, "the read-only call runs; the write waits")
	require.Equal(t, []thread.StitchType{thread.StitchToolCall, thread.StitchApprovalRequest}, []thread.StitchType{e.Stitches[0].Type, e.Stitches[1].Type})
	require.Equal(t, &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingApproval}, e.Status)
	require.Len(t, e.Approvals, 1)
	a := e.Approvals[0]
	require.Equal(t, 1, a.Stitch)
	require.Equal(t, e.Stitches[1].ID, a.ID)
	require.Equal(t, "s", a.Server)
	require.Equal(t, "write", a.Tool)
	ask := e.Outputs[len(e.Outputs)-1]
	require.Equal(t, thread.OutboxElicitation, ask.Kind)
	require.Equal(t, []string{"Approve", "Deny"}, ask.Options)
	require.Contains(t, ask.Approval.Arguments, `"title": "ENG-1 is flaky"`)

	asking := append(base, result("r", "done"), e.Stitches[1])
	for _, tc := range []struct {
		decision thread.Decision
		calls    int
		out      string
	}{
		{thread.Deny, 0, "error: this call was not made: denied by ada (discord): not today"},
		{thread.Approve, 1, "done"},
	} {
		called = map[string]int{}
		c := chain(append(append([]thread.Stitch{}, asking...), decided("w", tc.decision, string(tc.decision.StatusOf())+" by ada (discord): not today"))...)
		p := nextStep(c)
		require.Equal(t, stepRunTools, p.kind)
		e, got, done, err := r.runTools(t.Context(), th, store, c, p.calls)
		require.NoError(t, err)
		require.False(t, done)
		require.Equal(t, tc.calls, called["write"])
		require.Equal(t, tc.out, e.Stitches[len(e.Stitches)-1].Content)
		if tc.decision == thread.Approve {
			require.Equal(t, "w", got[len(got)-1].Meta().IntentOf, "the intent was recorded before the call")
		}
	}
}

func TestParseDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text     string
		decision thread.Decision
		reason   string
		ok       bool
	}{
		{"Approve", thread.Approve, "", true},
		{" deny ", thread.Deny, "", true},
		{"Deny: wrong file", thread.Deny, "wrong file", true},
		{"denied, not today", thread.Deny, "not today", true},
		{"APPROVED.", thread.Approve, "", true},
		{"I approve", "", "", false},
		{"any news?", "", "", false},
		{"", "", "", false},
	} {
		d, reason, ok := ParseDecision(tc.text)
		require.Equal(t, tc.ok, ok, tc.text)
		require.Equal(t, tc.decision, d, tc.text)
		require.Equal(t, tc.reason, reason, tc.text)
	}
	// A reply deciding the request is a step; one that does not waits.
	c := chain(system, prompt, call(2, "", tc1), asked("c1"), input("any news?"), input("Deny: no"))
	p := nextStep(c)
	require.Equal(t, stepDecide, p.kind)
	require.Equal(t, thread.Deny, p.decision)
	require.Equal(t, "no", p.reason)
	require.Equal(t, int64(6), p.reply.Seq)
}

// A call whose intent is recorded and whose result is not is never made
// again, whether or not its tool is offered: a replica that resumes the
// turn before its MCP server is listed still tells the model the outcome
// is unknown, never that there is no such tool.
func TestRecordedIntentIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	calls := 0
	listed := []tools.Tool{{Name: "mcp__s__write", Schema: json.RawMessage(`{"type":"object"}`), SideEffects: true,
		Handler: func(context.Context, tools.Call) (string, error) { calls++; return "done", nil }}}
	write := llm.ToolCall{ID: "w", Name: "mcp__s__write", Arguments: json.RawMessage(`{}`)}
	for _, tc := range []struct {
		name  string
		tools []tools.Tool
	}{{"Listed", listed}, {"NotListed", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := tools.NewRegistry()
			require.NoError(t, err)
			reg.AddSource(func() []tools.Tool { return tc.tools })
			r := &Runner{Tools: reg, Logger: logtest.New(t)}
			th := &thread.Thread{ID: uuid.New(), Type: thread.TypeInteractive}
			c := chain(system, prompt, call(2, "", write), intent("w"))
			p := nextStep(c)
			require.Equal(t, stepRunTools, p.kind)
			e, _, done, err := r.runTools(t.Context(), th, memStore{j: &journal{}}, c, p.calls)
			require.NoError(t, err)
			require.False(t, done)
			last := e.Stitches[len(e.Stitches)-1]
			require.Equal(t, UnknownOutcome, last.Content)
			require.True(t, last.ToolError)
			require.True(t, last.Meta().Unknown)
			require.Zero(t, calls, "the call was made again")
		})
	}
}
