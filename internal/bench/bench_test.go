package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

// TestMain lets the test binary stand in for weft-bench: run with
// WEFT_TEST_AS_WEFT=1 it is `weft-bench`, so the linear and discord
// benchmarks can start it as their `weft-bench serve` child, and the turns
// benchmark as its fake model.
func TestMain(m *testing.M) {
	if os.Getenv("WEFT_TEST_AS_WEFT") == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// runBench runs `weft-bench ARGS…` in-process on a scratch database of its
// own and returns what it printed. Only that it printed its figures is
// checked: timings belong to the benchmark's report, never to a test.
func runBench(t *testing.T, args ...string) string {
	t.Helper()
	scratch := fmt.Sprintf("weft_bench_smoke_%d", rand.Uint64())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, append([]string{"weft-bench"}, append(args, "-db", scratch)...),
		env(map[string]string{"DATABASE_URL": dbtest.ServerURL(), "WEFT_LOG_LEVEL": "error"}), &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	return stdout.String()
}

// TestBenchTurnsPrintsItsFigures cannot run in parallel: the bench starts
// its fake model as this test binary (see TestBenchLinearPrintsItsFigures).
func TestBenchTurnsPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "turns", "-duration", "1s", "-turns", "20", "-rate", "20", "-in-flight", "20", "-slow-model", "200ms")
	for _, want := range []string{"turns/s", "River no-op jobs/s", "River no-op jobs/s (anchor)", "Concurrency: ", "intake write, turns in flight", "the fake model's child process", "pickup, enqueue commit → turn start",
		"backend overhead per step, paced", "overall:"} {
		require.Contains(t, out, want)
	}
}

func TestBenchStorePrintsItsFigures(t *testing.T) {
	t.Parallel()
	out := runBench(t, "store", "-stitches", "2000", "-threads", "100", "-duration", "200ms", "-samples", "20")
	for _, want := range []string{"seeded 2000 stitches over 100 threads", "append/s", "raw insert/s", "Read last 50 stitches", "overall:"} {
		require.Contains(t, out, want)
	}
}

// TestBenchLinearPrintsItsFigures cannot run in parallel: the bench starts
// `weft-bench serve` as this test binary, which needs WEFT_TEST_AS_WEFT in the
// environment it inherits (see TestMain).
func TestBenchLinearPrintsItsFigures(t *testing.T) {
	t.Setenv("WEFT_TEST_AS_WEFT", "1")
	out := runBench(t, "linear", "-duration", "1s", "-rate", "20", "-step", "500ms", "-max-rate", "500",
		"-model-delay", "0", "-wait", "20s", "-overload", "2")
	for _, want := range []string{"Anchor steady", "ack latency (200s)", "webhook sent → first activity at fake", "capacity before shedding",
		"timed out", "peak RSS of weft serve (VmHWM)", "against the anchor: ack p99", "overall:"} {
		require.Contains(t, out, want)
	}
}

func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"--help"}, {"store", "-h"}, {"turns", "--help"}, {"linear", "-h"}, {"replies", "-h"}, {"discord", "-h"}, {"stream", "-h"}} {
		var stdout bytes.Buffer
		err := Run(context.Background(), append([]string{"weft-bench"}, args...), env(nil), &stdout, &bytes.Buffer{})
		require.NoError(t, err, args)
		require.NotEmpty(t, stdout.String(), args)
	}
	err := Run(context.Background(), []string{"weft-bench", "frobnicate"}, env(nil), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUsage)
	err = Run(context.Background(), []string{"weft-bench", "store", "-no-such-flag"}, env(nil), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUsage)
}
