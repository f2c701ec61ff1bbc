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

// TestToolNeedingApprovalIsNotCalled holds the rule that stands until a
// turn can wait for approval: a call that needs one is never made.
func TestToolNeedingApprovalIsNotCalled(t *testing.T) {
	t.Parallel()
	called := map[string]int{}
	handler := func(name string) tools.Handler {
		return func(context.Context, tools.Call) (string, error) { called[name]++; return "done", nil }
	}
	reg, err := tools.NewRegistry()
	require.NoError(t, err)
	reg.AddSource(func() []tools.Tool {
		return []tools.Tool{
			{Name: "mcp__s__write", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler("write"), SideEffects: true, NeedsApproval: true},
			{Name: "mcp__s__read", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler("read")},
		}
	})
	r := &Runner{Tools: reg, Logger: logtest.New(t)}
	th := &thread.Thread{ID: uuid.New()}

	out, failed := r.runTool(t.Context(), th, llm.ToolCall{ID: "1", Name: "mcp__s__write", Arguments: json.RawMessage(`{}`)})
	require.True(t, failed)
	require.Contains(t, out, "needs a person's approval")
	out, failed = r.runTool(t.Context(), th, llm.ToolCall{ID: "2", Name: "mcp__s__read", Arguments: json.RawMessage(`{}`)})
	require.False(t, failed)
	require.Equal(t, "done", out)
	require.Equal(t, map[string]int{"read": 1}, called)
	var offered []string
	for _, s := range r.specs(th) {
		offered = append(offered, s.Name)
	}
	require.Subset(t, offered, []string{"mcp__s__write", "mcp__s__read"}, "a source's tools are offered to the model")
}
