package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/weft-dev/weft/internal/app"
)

// errUsage reports a command line weft could not understand; the usage was
// already printed.
var errUsage = errors.New("usage")

const usage = `weft runs AI agents across Linear and Discord on one Postgres store.

Usage:
  weft serve                  serve webhooks, the API and the MCP endpoint (applies migrations first)
  weft demo [-exit]           play a conversation across Linear, Discord and Slack on built-in fakes
  weft migrate up|down|status apply, roll back one, or list migrations
  weft ops [VIEW]             list the ops views, or print one as a table
  weft tenant link ORG KIND:ID... | unlink KIND:ID | list
                              tie Linear/Discord/Slack/GitHub tenants into one organisation
  weft org set ORG [--model P/M] [--fast-model P/M] [--persona-file F] | unset ORG | show ORG | list
                              give an organisation its own model, fast model or persona
  weft thread create --goal TEXT [--detach]
                              create an autonomous thread and work it here until it finishes
  weft thread show ID         print a thread's stitches as a timeline
  weft thread reply ID TEXT   answer a thread that waits for a person (a question, an approval)
  weft mcp                    serve the MCP server over stdin/stdout
  weft tools check            connect to WEFT_MCP_CONFIG's MCP servers and list their tools
  weft bench store|turns|linear|replies|discord|slack|github|console|stream|tools|soak|scale [flags]
                              run a benchmark (the weft-bench command)
  weft version                print the version weft was built as
  weft help [COMMAND]         this text, or a command's

"weft COMMAND --help" prints a command's usage. Configuration is read from
the environment; see README.md.
`

// usages are the subcommands' own usage texts, printed by --help.
var usages = map[string]string{
	"serve": `usage: weft serve

Serves webhooks, the REST API, /metrics and /mcp on WEFT_ADDR (:8080), works
turns and deliveries, and holds the Discord gateway, as WEFT_ROLE says (all,
api or worker). Applies pending migrations first. At start it logs one line
per door (API token, Linear, Discord, Slack, model) saying whether it is on.
Stops on SIGINT or SIGTERM, draining for up to WEFT_SHUTDOWN_TIMEOUT.
`,
	"migrate": `usage: weft migrate up|down|status

  up      apply every pending migration
  down    roll back the newest migration
  status  list the migrations and when each was applied
`,
	"ops": `usage: weft ops [VIEW]

Without VIEW, lists the ops views; with one, prints it as a table.
`,
	"thread": threadUsage,
	"tenant": tenantUsage,
	"org":    orgUsage,
	"mcp": `usage: weft mcp

Serves the MCP tools (get-thread-replies, list-threads, get-thread,
search-threads) over stdin and stdout, for an MCP client that starts weft
as a subprocess. Logs go to stderr. Needs no API token.
`,
	"tools":   toolsUsage,
	"bench":   benchUsage,
	"demo":    demoUsage,
	"version": versionUsage,
}

// run is main without the process: arguments, environment and output are
// passed in so tests can run any subcommand in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[1], args[2:]
	switch {
	case cmd == "help" || isHelp(cmd):
		if len(rest) > 0 && usages[rest[0]] != "" {
			fmt.Fprint(stdout, usages[rest[0]])
		} else {
			fmt.Fprint(stdout, usage)
		}
		return nil
	case usages[cmd] == "":
		fmt.Fprintf(stderr, "weft: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	case cmd == "thread" && (len(rest) > 0 && isHelp(rest[0]) || len(rest) > 1 && isHelp(rest[1])):
		// Each action prints its own usage, before it needs a configuration.
		return threadCmd(ctx, &app.Config{}, nil, rest, stdout, stderr)
	case cmd == "demo":
		// Its configuration is the fakes', laid over the environment; it
		// prints its own usage, flags included.
		return demoCmd(ctx, getenv, rest, stdout, stderr)
	case len(rest) > 0 && isHelp(rest[0]):
		fmt.Fprint(stdout, usages[cmd])
		return nil
	case cmd == "bench":
		return bench(rest, stdout, stderr)
	case (cmd == "serve" || cmd == "mcp" || cmd == "version") && len(rest) > 0:
		return badUsage(stderr, cmd)
	case cmd == "version":
		// Needs no configuration: it must answer in an image with none.
		printVersion(stdout)
		return nil
	}
	cfg, err := app.LoadConfig(getenv)
	if err != nil {
		return err
	}
	logger := app.NewLogger(stderr, cfg.LogLevel)
	switch cmd {
	case "serve":
		a, err := app.New(ctx, cfg, logger)
		if err != nil {
			return err
		}
		return a.Run(ctx)
	case "migrate":
		return migrate(ctx, cfg, logger, rest, stdout, stderr)
	case "ops":
		return ops(ctx, cfg, logger, rest, stdout, stderr)
	case "thread":
		return threadCmd(ctx, cfg, logger, rest, stdout, stderr)
	case "tenant":
		return tenantCmd(ctx, cfg, logger, rest, stdout, stderr)
	case "org":
		return orgCmd(ctx, cfg, logger, rest, stdout, stderr)
	case "tools":
		return toolsCmd(ctx, cfg, logger, rest, stdout, stderr)
	default: // mcp
		return app.RunMCP(ctx, cfg, logger, os.Stdin, stdout)
	}
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// badUsage prints cmd's usage on stderr for a command line it refuses.
func badUsage(stderr io.Writer, cmd string) error {
	fmt.Fprint(stderr, usages[cmd])
	return errUsage
}

// parseFlags parses a subcommand's flags: -h prints its usage on stdout and
// ends the command successfully (done); a bad flag prints it on stderr.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (done bool, err error) {
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return true, nil
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n%s", fs.Name(), err, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return true, errUsage
	}
	return false, nil
}
