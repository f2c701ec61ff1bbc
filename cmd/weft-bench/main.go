// Command weft-bench measures weft against the targets of
// docs/architecture.md, each beside a baseline measured in the same run.
// It is a command of its own so that the weft binary carries none of the
// fakes the benchmarks drive it with; `weft bench ARGS` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/weft-dev/weft/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "weft-bench:", err)
		}
		os.Exit(1)
	}
}

// errUsage reports a command line weft-bench could not understand; the
// usage was already printed.
var errUsage = errors.New("usage")

const usage = `weft-bench measures weft; each benchmark works in a scratch database on
DATABASE_URL's server and prints its figures beside their targets, PASS or
MISS (a MISS is a figure, not a failure).

Usage:
  weft-bench store [flags]    stitch appends and history reads
  weft-bench turns [flags]    the processor: turns/s, pickup latency, overhead per step
  weft-bench linear [flags]   Linear webhooks against a weft serve child process
  weft-bench replies [flags]  get-thread-replies in-process, over REST and over MCP
  weft-bench discord [flags]  Discord gateway messages to replies against a weft serve child
  weft-bench slack [flags]    Slack Events API deliveries to replies against a weft serve child, with discovery
  weft-bench console [flags]  the operator console: a 1,000-stitch thread page, a 100,000-thread list
  weft-bench soak [flags]     the full serve at half its capacity for 30 min: throughput, RSS, goroutines, connections, queue per minute
  weft-bench scale [flags]    1, 2, 4 api+worker replicas on one database: sessions/s at the knee, turns/s, CPU a session; a worker killed loses nothing
  weft-bench serve            weft serve itself (what linear, discord and slack start as their child)

"weft-bench BENCH -h" lists a benchmark's flags.
`

// run is main without the process, for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[1], args[2:]
	bench, ok := map[string]func(context.Context, *app.Config, *slog.Logger, []string, io.Writer, io.Writer) error{
		"store": benchStore, "turns": benchTurns, "linear": benchLinear, "replies": benchReplies, "discord": benchDiscord,
		"slack": benchSlack, "console": benchConsole, "soak": benchSoak, "scale": benchScale,
	}[cmd]
	switch {
	case cmd == "help" || cmd == "-h" || cmd == "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case !ok && cmd != "serve":
		fmt.Fprintf(stderr, "weft-bench: unknown benchmark %q\n\n%s", cmd, usage)
		return errUsage
	}
	cfg, err := app.LoadConfig(getenv)
	if err != nil {
		return err
	}
	logger := app.NewLogger(stderr, cfg.LogLevel)
	if cmd == "serve" {
		a, err := app.New(ctx, cfg, logger)
		if err != nil {
			return err
		}
		return a.Run(ctx)
	}
	if err := bench(ctx, cfg, logger, rest, stdout, stderr); !errors.Is(err, errHelp) {
		return err
	}
	return nil
}

// errHelp ends a run that printed the help it was asked for.
var errHelp = errors.New("help")

// parseFlags parses a benchmark's flags: -h prints them on stdout (errHelp,
// which run turns into success), a bad one prints them on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage of %s:\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return errHelp
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return badFlags(fs, stderr)
	}
	return nil
}

// badFlags prints a benchmark's flags on stderr for a command line it
// refuses.
func badFlags(fs *flag.FlagSet, stderr io.Writer) error {
	fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
	fs.SetOutput(stderr)
	fs.PrintDefaults()
	return errUsage
}
