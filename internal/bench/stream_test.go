package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchStreamPrintsItsFigures cannot run in parallel: the bench starts
// `weft-bench serve` as this test binary, which needs WEFT_TEST_AS_WEFT in
// the environment it inherits (see TestMain).
func TestBenchStreamPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "stream", "-answers", "1", "-wait", "30s")
	for _, want := range []string{"First visible text at the platform's fake", "console, WEFT_STREAM=on", "linear, WEFT_STREAM=on",
		"slack, WEFT_STREAM=on", "discord, WEFT_STREAM=on", "Requests to the platform per answer", "target ≤ 12", "target ≤ 4",
		"CPU per answer", "overall:"} {
		require.Contains(t, out, want)
	}
}
