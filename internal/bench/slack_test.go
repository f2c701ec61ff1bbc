package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchSlackPrintsItsFigures cannot run in parallel: the bench starts
// `weft-bench serve` as this test binary, which needs WEFT_TEST_AS_WEFT in the
// environment it inherits (see TestMain).
func TestBenchSlackPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "slack", "-duration", "1s", "-rate", "10", "-threads", "3", "-ack-duration", "1s", "-ack-rate", "50", "-wait", "20s")
	for _, want := range []string{"Setup:", "mention (with discovery) → first reply at fake, our time", "conversations.history",
		"event → reply at fake, our time", "of which model calls (excluded)", "signed delivery → acknowledgement", "the anchor's",
		"peak RSS of weft serve (VmHWM)", "overall:"} {
		require.Contains(t, out, want)
	}
}
