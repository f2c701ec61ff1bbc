// Command weft-bench measures weft against the targets of
// docs/architecture.md, each beside a baseline measured in the same run.
// It is a command of its own so that the weft binary carries none of the
// fakes the benchmarks drive it with; `weft bench ARGS` runs it. The
// benchmarks live in internal/bench.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/weft-dev/weft/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.Run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, bench.ErrUsage) {
			fmt.Fprintln(os.Stderr, "weft-bench:", err)
		}
		os.Exit(1)
	}
}
