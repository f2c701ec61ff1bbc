package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

// TestBenchToolsPrintsItsFigures runs the tools benchmark small: its stdio
// server is this test binary (TestMain hands WEFT_TEST_AS_WEFT to Main,
// which serves MCP when the benchmark asks it to).
func TestBenchToolsPrintsItsFigures(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, []string{"weft-bench", "tools", "-samples", "20", "-turns", "10", "-rounds", "2", "-work", "1"},
		env(map[string]string{"DATABASE_URL": dbtest.ServerURL(), "WEFT_LOG_LEVEL": "error"}), &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	for _, want := range []string{"stdio, 1 call", "HTTP, 1 call", "stdio, 10 at once", "weft adds (p99)", "overall:"} {
		require.Contains(t, stdout.String(), want)
	}
}
