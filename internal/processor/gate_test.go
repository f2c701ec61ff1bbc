package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
)

// heldGate admits a turn only once the test lets it, and says when a turn
// asks.
type heldGate struct {
	asked chan struct{}
	open  chan struct{}
}

func (g *heldGate) Acquire(ctx context.Context) (func(), error) {
	g.asked <- struct{}{}
	select {
	case <-g.open:
		return func() {}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestTurnWaitsForTheGate: a turn asks the gate before it reads or writes
// its thread, and runs once admitted.
func TestTurnWaitsForTheGate(t *testing.T) {
	t.Parallel()
	gate := &heldGate{asked: make(chan struct{}, 10), open: make(chan struct{})}
	h := newHarnessConfig(t, func(c *processor.Config) { c.Gate = gate })
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"done"}`}}})
	th, err := h.ingest.StartThread(context.Background(), h.ingest.Builder().WithGoal("Write the standup").Autonomous())
	require.NoError(t, err)

	select {
	case <-gate.asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the turn never asked the gate")
	}
	got, err := h.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusPending, got.Status, "a turn waiting at the gate has not started")
	require.Empty(t, got.LeaseOwner)
	require.Zero(t, h.llm.Calls())

	close(gate.open)
	h.waitStatus(t, th.ID, thread.StatusCompleted)
}
