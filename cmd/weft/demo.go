package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/weft-dev/weft/internal/demo"
)

const demoUsage = `Usage: weft demo [-exit] [-addr ADDR]

Plays a short conversation across Linear and Discord, with nothing to set up:
weft serves as ` + "`weft serve`" + ` does, pointed at its own fakes of Linear, Discord and
a model, started in this process. A mention in Linear is answered with a
thought, an action and a response; /continue moves it to a Discord thread; a
follow-up there is answered from the Linear history; weft asks back before it
acts, and gets its answer. Each step is printed as it happens, then the
console's login link; weft keeps serving until Ctrl-C.

The database is DATABASE_URL, or the one ` + "`make run`" + ` uses on a fresh machine
(postgres on 127.0.0.1:5432); stop a ` + "`weft serve`" + ` on it first,
since both would work the same job queue. With WEFT_LLM_PROVIDER set the agent
uses that real model instead of the scripted one.

Flags:
`

func demoCmd(ctx context.Context, getenv func(string) string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demo.Options
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
	w := demo.New(getenv("WEFT_LLM_PROVIDER") == "")
	defer w.Close()
	_, err := demo.Run(ctx, w, o, getenv, stdout, stderr)
	return err
}
