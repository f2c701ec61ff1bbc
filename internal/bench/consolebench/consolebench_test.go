package consolebench_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/consolebench"
	"github.com/weft-dev/weft/internal/logtest"
)

// The full run: go test ./internal/bench/consolebench -run TestRun -v
// -args -threads 100000 -stitches 1000 -samples 200. By default it runs
// small, to keep the suite fast and check the bench still works.
var (
	threads  = flag.Int("threads", 2000, "threads in the list")
	stitches = flag.Int("stitches", 1000, "stitches of the rendered thread")
	samples  = flag.Int("samples", 20, "requests timed per page")
)

// TestRun runs the bench; its figures are printed, never asserted.
func TestRun(t *testing.T) {
	cfg, err := app.LoadConfig(func(k string) string {
		return map[string]string{"DATABASE_URL": dbtest.URL(t), "WEFT_ROLE": "api", "WEFT_API_TOKEN": consolebench.Token}[k]
	})
	require.NoError(t, err)
	weft, err := app.New(context.Background(), cfg, logtest.New(t))
	require.NoError(t, err)
	t.Cleanup(weft.Close)
	var out bytes.Buffer
	res, err := consolebench.Run(context.Background(), weft.Store().Pool(), weft.Handler(), io.MultiWriter(os.Stdout, &out),
		consolebench.Config{Threads: *threads, Stitches: *stitches, Samples: *samples})
	require.NoError(t, err)
	require.Positive(t, res.ThreadAnchorP99)
	require.Positive(t, res.ListAnchorP99)
	require.Contains(t, out.String(), "anchor, its rows read bare from Postgres")
	require.Contains(t, out.String(), "anchor, the same pages' threads read bare by keyset")
}
