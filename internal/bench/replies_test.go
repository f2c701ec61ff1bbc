package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBenchRepliesPrintsItsFigures(t *testing.T) {
	t.Parallel()
	out := runBench(t, "replies", "-samples", "20")
	for _, want := range []string{"in-process", "REST", "MCP", "p99 / in-process", "overall:"} {
		require.Contains(t, out, want)
	}
}
