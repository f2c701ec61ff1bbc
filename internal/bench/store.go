package bench

import (
	"context"
	"flag"
	"fmt"
	"github.com/weft-dev/weft/internal/bench/kit"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/dbbench"
)

// Targets from docs/architecture.md.
const (
	targetAppendRatio = 0.4
	targetReadP99     = 5 * time.Millisecond
)

// benchStore measures the thread store in a scratch database it creates on
// the configured server and drops afterwards.
func benchStore(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench store", flag.ContinueOnError)
	stitches := fs.Int("stitches", 1_000_000, "stitches to seed before measuring reads")
	threads := fs.Int("threads", 10_000, "threads the seeded stitches are spread over")
	duration := fs.Duration("duration", 5*time.Second, "how long each append measurement runs")
	samples := fs.Int("samples", 5000, "history reads to time")
	sc := scratchFlags(fs, "weft_bench")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}

	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(stdout, "weft-bench store: scratch database %s\n", *sc.name)
	// Enough connections for the 16-connection runs plus the pool's spare.
	pool, err := db.Open(ctx, app.WithQuery(url, "pool_max_conns", "32"))
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	store := db.New(pool, logger)

	start := time.Now()
	ids, err := dbbench.Seed(ctx, pool, *threads, *stitches)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d stitches over %d threads in %s\n\n", *stitches, *threads, time.Since(start).Round(time.Second))

	fmt.Fprintf(stdout, "Stitch append (db.AppendStitch, ~%d B payload) vs raw single-row INSERT, %s each:\n", len(dbbench.Payload), *duration)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conns\tappend/s\traw insert/s\tratio\ttarget\t")
	pass := true
	for _, conns := range []int{1, 4, 16} {
		raw, err := dbbench.RawInserts(ctx, pool, ids, conns, *duration)
		if err != nil {
			return fmt.Errorf("raw inserts: %w", err)
		}
		app, err := dbbench.Appends(ctx, store, ids, conns, *duration)
		if err != nil {
			return fmt.Errorf("appends: %w", err)
		}
		ratio := app.PerSecond() / raw.PerSecond()
		pass = pass && ratio >= targetAppendRatio
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.2f\t≥ %.1f %s\t\n", conns, app.PerSecond(), raw.PerSecond(), ratio, targetAppendRatio, kit.Verdict(ratio >= targetAppendRatio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	lat, err := dbbench.LastN(ctx, store, ids, 50, *samples)
	if err != nil {
		return fmt.Errorf("reads: %w", err)
	}
	p99 := lat.Percentile(99)
	pass = pass && p99 <= targetReadP99
	fmt.Fprintf(stdout, "\nRead last 50 stitches of a thread (%d samples, 1 conn, %d stitches in table):\n", len(lat), *stitches)
	fmt.Fprintf(stdout, "  p50 %s  p99 %s  max %s  (target p99 ≤ %s) %s\n",
		kit.Ms(lat.Percentile(50)), kit.Ms(p99), kit.Ms(lat.Percentile(100)), targetReadP99, kit.Verdict(p99 <= targetReadP99))
	fmt.Fprintf(stdout, "\noverall: %s\n", kit.Verdict(pass))
	return nil
}
