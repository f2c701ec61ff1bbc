package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchGitHubPrintsItsFigures cannot run in parallel: the bench starts
// `weft-bench serve` as this test binary, which needs WEFT_TEST_AS_WEFT in
// the environment it inherits (see TestMain).
func TestBenchGitHubPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "github", "-mentions", "3", "-rate", "10", "-ack-duration", "1s", "-ack-rate", "50", "-wait", "30s")
	for _, want := range []string{"Mentions:", "mention → 👀 at fake", "mention → answer comment at fake, our time",
		"of which model calls (excluded)", "REST calls per mention:", "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
		"signed delivery → acknowledgement", "the anchor's", "peak RSS of weft serve (VmHWM)", "overall:"} {
		require.Contains(t, out, want)
	}
}
