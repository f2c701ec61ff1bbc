package bench

import (
	"context"
	"flag"
	"fmt"
	"github.com/weft-dev/weft/internal/bench/kit"
	"io"
	"log/slog"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/consolebench"
)

// benchConsole measures the operator console's pages, rendered server-side,
// in a scratch database it seeds: a thread of many stitches, and a page of
// a long thread list.
func benchConsole(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench console", flag.ContinueOnError)
	threads := fs.Int("threads", 100_000, "threads in the list")
	stitches := fs.Int("stitches", 1_000, "stitches of the rendered thread")
	samples := fs.Int("samples", 200, "requests timed per page")
	keep := fs.Bool("keep", false, "keep the scratch database afterwards")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	const scratch = "weft_bench_console"
	url, cleanup, err := kit.Scratch(ctx, cfg.DatabaseURL, scratch, *keep, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(stdout, "weft-bench console: scratch database %s\n", scratch)
	// weft as serve builds it (role api: the console needs no turns).
	c := *cfg
	c.DatabaseURL, c.Role, c.APIToken = url, "api", consolebench.Token
	weft, err := app.New(ctx, &c, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer weft.Close()
	_, err = consolebench.Run(ctx, weft.Store().Pool(), weft.Handler(), stdout, consolebench.Config{Threads: *threads, Stitches: *stitches, Samples: *samples})
	return err
}
