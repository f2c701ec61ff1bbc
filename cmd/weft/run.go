package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
)

// errUsage reports a command line weft could not understand; the usage was
// already printed.
var errUsage = errors.New("usage")

const usage = `weft runs AI agents across Linear and Discord on one Postgres store.

Usage:
  weft serve                  serve webhooks and the API (applies migrations first)
  weft demo [-exit]           play a conversation across Linear and Discord on built-in fakes
  weft migrate up|down|status apply, roll back one, or list migrations
  weft ops [VIEW]             list the ops views, or print one as a table
  weft thread create --goal TEXT [--detach]
                              create an autonomous thread and work it here until it finishes
  weft thread show ID         print a thread's stitches as a timeline
  weft bench store [flags]    measure stitch appends and history reads
  weft mcp                    serve the MCP server over stdin/stdout
  weft help                   this text

Configuration is read from the environment; see README.md.
`

// run is main without the process: arguments, environment and output are
// passed in so tests can run any subcommand in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger)
	case "demo":
		return demoCmd(ctx, getenv, rest, stdout, stderr)
	case "migrate":
		return migrate(ctx, cfg, logger, rest, stdout, stderr)
	case "ops":
		return ops(ctx, cfg, logger, rest, stdout)
	case "thread":
		return threadCmd(ctx, cfg, logger, rest, stdout, stderr)
	case "bench":
		return bench(ctx, cfg, logger, rest, stdout, stderr)
	case "mcp":
		return mcpCmd(ctx, cfg, logger, os.Stdin, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "weft: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// openStore connects to the configured database.
func openStore(ctx context.Context, cfg *config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if cfg.DBConns > 0 && !strings.Contains(url, "pool_max_conns") {
		url = withQuery(url, "pool_max_conns", strconv.Itoa(cfg.DBConns))
	}
	pool, err := db.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	return db.New(pool, logger), pool, nil
}

// openMigrated connects and applies pending migrations, as the commands
// that run the processor must before they start.
func openMigrated(ctx context.Context, cfg *config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	store, pool, err := openStore(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := db.Migrate(ctx, pool, logger.With("component", "migrate")); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return store, pool, nil
}
