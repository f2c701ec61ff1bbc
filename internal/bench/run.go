// Package bench holds weft's benchmarks, each measuring weft against the
// targets of docs/architecture.md beside a baseline measured in the same
// run; cmd/weft-bench runs them (`weft bench ARGS` runs it).
package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/weft-dev/weft/internal/bench/kit"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weft-dev/weft/internal/app"
)

// Main is weft-bench: it runs Run with this process's arguments,
// environment and output until SIGINT or SIGTERM, and returns its exit
// status.
func Main() int {
	if os.Getenv(toolsServerEnv) == "1" {
		return serveToolsStdio()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "weft-bench:", err)
		}
		return 1
	}
	return 0
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
  weft-bench github [flags]   GitHub webhook deliveries to 👀 and answer comments against a weft serve child
  weft-bench tools [flags]    an MCP call through an agent step beside the SDK's, over stdio and HTTP; 100 callers at once
  weft-bench console [flags]  the operator console: a 1,000-stitch thread page, a 100,000-thread list
  weft-bench stream [flags]   answers streaming (50 chunks over 2 s) to the console's event stream, Linear, Slack, Discord: first text, requests, CPU
  weft-bench soak [flags]     the full serve at half its capacity for 30 min: throughput, RSS, goroutines, connections, queue per minute
  weft-bench scale [flags]    1, 2, 4 api+worker replicas on one database: sessions/s at the knee, turns/s, CPU a session; a worker killed loses nothing
  weft-bench serve            weft serve itself (what linear, discord, slack and github start as their child)

"weft-bench BENCH -h" lists a benchmark's flags.
`

// Run runs the benchmark args[1] names with the rest of args as its flags.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[1], args[2:]
	bench, ok := map[string]func(context.Context, *app.Config, *slog.Logger, []string, io.Writer, io.Writer) error{
		"store": benchStore, "turns": benchTurns, "linear": benchLinear, "replies": benchReplies, "discord": benchDiscord,
		"slack": benchSlack, "github": benchGitHub, "console": benchConsole, "stream": benchStream, "tools": benchTools, "soak": benchSoak, "scale": benchScale,
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

// scratch is a bench's scratch database, named by its -db flag and kept
// afterwards with -keep.
type scratch struct {
	name *string
	keep *bool
}

// scratchFlags registers -db, defaulting to name, and -keep on fs.
func scratchFlags(fs *flag.FlagSet, name string) scratch {
	return scratch{
		name: fs.String("db", name, "name of the scratch database (dropped first if it exists)"),
		keep: fs.Bool("keep", false, "keep the scratch database afterwards"),
	}
}

// create creates the scratch database on the configured server and returns
// its URL and the cleanup that drops it (unless -keep).
func (s scratch) create(ctx context.Context, cfg *app.Config, logger *slog.Logger) (string, func(), error) {
	return kit.Scratch(ctx, cfg.DatabaseURL, *s.name, *s.keep, logger)
}

// chatFlags are the flags of the discord and slack benches: threads each
// opened by a mention, then a steady run of follow-ups over them.
type chatFlags struct {
	duration, wait time.Duration
	rate, threads  int
	scratch        scratch
}

// chatFlagsOn registers the chat benches' flags on fs, the scratch
// database named db by default and -threads described by threads.
func chatFlagsOn(fs *flag.FlagSet, db, threads string) *chatFlags {
	c := &chatFlags{scratch: scratchFlags(fs, db)}
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "how long the steady run of follow-ups lasts")
	fs.IntVar(&c.rate, "rate", 20, "follow-up messages per second, spread round-robin over the threads")
	fs.IntVar(&c.threads, "threads", 50, threads)
	fs.DurationVar(&c.wait, "wait", 30*time.Second, "how long to wait for the setup's and the steady run's replies")
	return c
}

func (c *chatFlags) valid() bool {
	return c.rate >= 1 && c.threads >= 1 && c.duration > 0 && c.wait > 0
}

// paceFollowUps runs the steady run's schedule: rate follow-ups a second
// for duration, open-loop, round-robin over the threads; post sends one,
// given its thread's index and its tag (after the mentions' 0 to
// threads-1). It returns the generator's lag.
func (c *chatFlags) paceFollowUps(ctx context.Context, post func(thread, tag int)) (time.Duration, error) {
	return kit.Pace(ctx, c.rate, int(c.duration.Seconds()*float64(c.rate)), func(i int) error {
		post(i%c.threads, c.threads+i)
		return nil
	})
}
