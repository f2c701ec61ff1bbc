package bench

import (
	"context"
	"flag"
	"fmt"
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
	keep := fs.Bool("keep", false, "keep the scratch database afterwards")
	scratch := fs.String("db", "weft_bench", "name of the scratch database (dropped first if it exists)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}

	url, cleanup, err := scratchDatabase(ctx, cfg, logger, *scratch, *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(stdout, "weft-bench store: scratch database %s\n", *scratch)
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
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.2f\t≥ %.1f %s\t\n", conns, app.PerSecond(), raw.PerSecond(), ratio, targetAppendRatio, verdict(ratio >= targetAppendRatio))
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
		ms(lat.Percentile(50)), ms(p99), ms(lat.Percentile(100)), targetReadP99, verdict(p99 <= targetReadP99))
	fmt.Fprintf(stdout, "\noverall: %s\n", verdict(pass))
	return nil
}

// scratchDatabase creates a bench's scratch database on the configured
// server (dropping an old one of that name first) and returns its URL and a
// cleanup that drops it again, unless keep.
func scratchDatabase(ctx context.Context, cfg *app.Config, logger *slog.Logger, name string, keep bool) (string, func(), error) {
	url, drop, err := dbbench.ScratchDatabase(ctx, cfg.DatabaseURL, name)
	if err != nil {
		return "", nil, err
	}
	cleanup := func() {
		if keep {
			return
		}
		if err := drop(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("drop scratch database", slog.Any("error", err))
		}
	}
	return url, cleanup, nil
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
