package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchDiscordPrintsItsFigures cannot run in parallel: the bench starts
// `weft-bench serve` as this test binary, which needs WEFT_TEST_AS_WEFT in the
// environment it inherits (see TestMain).
func TestBenchDiscordPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "discord", "-duration", "1s", "-rate", "10", "-threads", "3", "-wait", "20s")
	for _, want := range []string{"Setup:", "thread opened → first reply", "its answer (last reply)", "REST calls per mention",
		"message dispatched → reply at fake, our time", "of which model calls (excluded)",
		"message dispatched → first typing at fake", "peak RSS of weft serve (VmHWM)", "overall:"} {
		require.Contains(t, out, want)
	}
}
