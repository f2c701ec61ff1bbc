package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/weft-dev/weft/internal/demo"
)

const demoUsage = `Usage: weft demo [-exit] [-addr ADDR]

Plays a short conversation across Linear, Discord and Slack, with nothing to
set up: weft serves as ` + "`weft serve`" + ` does, pointed at its own fakes of Linear,
Discord, Slack and a model, started in this process. A mention in Linear is
answered with a thought, an action and a response; /continue moves it to a
Discord thread; a follow-up there is answered from the Linear history; weft
asks back before it acts, and gets its answer; the agent calls a write tool of
a small stdio MCP server that ships with the demo, once approved with a
Discord button; a mention in Slack is answered in its thread from what weft
remembered, and so is a follow-up there. Each step is printed as it happens,
then the console's login link; weft keeps serving until Ctrl-C.

The database is DATABASE_URL, or the one ` + "`make run`" + ` uses on a fresh machine
(postgres on 127.0.0.1:5432); stop a ` + "`weft serve`" + ` on it first,
since both would work the same job queue. With WEFT_LLM_PROVIDER set the agent
uses that real model instead of the scripted one.

Flags:
`

// notesServerFlag, hidden from the usage, runs `weft demo` as the demo's
// notes MCP server on stdin and stdout: the demo's weft starts it so from
// the WEFT_MCP_CONFIG file the demo writes.
const notesServerFlag = "-mcp-notes"

func demoCmd(ctx context.Context, getenv func(string) string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 2 && args[0] == notesServerFlag {
		return demo.ServeNotes(ctx, args[1])
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("weft demo: %w", err)
	}
	fs := flag.NewFlagSet("weft demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := demo.Options{NotesServer: []string{self, "demo", notesServerFlag}}
	fs.BoolVar(&o.Exit, "exit", false, "leave after the story instead of serving until Ctrl-C (for scripts)")
	// WEFT_ADDR, as serve reads it, so that one setting moves both.
	fs.StringVar(&o.Addr, "addr", cmp.Or(getenv("WEFT_ADDR"), "127.0.0.1:8080"), "HTTP listen address (WEFT_ADDR, when set, is its default)")
	// Parse reports a bad flag itself; the usage follows, on stdout when
	// asked for.
	fs.Usage = func() {}
	usage := func(w io.Writer) {
		fmt.Fprint(w, demoUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return nil
		}
		usage(stderr)
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "weft demo: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	w, err := demo.New(getenv("WEFT_LLM_PROVIDER") == "")
	if err != nil {
		return err
	}
	defer w.Close()
	_, err = demo.Run(ctx, w, o, getenv, stdout, stderr)
	return err
}
