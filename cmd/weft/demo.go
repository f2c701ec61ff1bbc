package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
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
(weft on 127.0.0.1:5432, created if missing); stop a ` + "`weft serve`" + ` on it first,
since both would work the same job queue. With WEFT_LLM_PROVIDER set the agent
uses that real model instead of the scripted one.

Flags:
`

// demoDatabaseURL is the database `make run` uses when a PostgreSQL on
// 127.0.0.1:5432 lets user postgres in, as on a fresh machine.
const demoDatabaseURL = "postgres://postgres@127.0.0.1:5432/weft?sslmode=disable"

// demoOptions are weft demo's flags.
type demoOptions struct {
	exit bool   // leave after the story
	addr string // where weft serves
}

func demoCmd(ctx context.Context, getenv func(string) string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demoOptions
	fs.BoolVar(&o.exit, "exit", false, "leave after the story instead of serving until Ctrl-C (for scripts)")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "HTTP listen address")
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
	_, err := playDemo(ctx, w, o, getenv, stdout, stderr)
	return err
}

// playDemo serves weft against the world's fakes and plays the story on
// it, then serves until ctx ends (or, with o.exit, stops).
func playDemo(ctx context.Context, w *demo.World, o demoOptions, getenv func(string) string, stdout, stderr io.Writer) (*demo.Outcome, error) {
	dbURL := getenv("DATABASE_URL")
	if dbURL == "" {
		dbURL = demoDatabaseURL
		if _, err := db.CreateDatabase(ctx, dbURL); err != nil {
			return nil, fmt.Errorf("demo database (set DATABASE_URL, or run `make demo`): %w", err)
		}
	}
	host, err := hostOf(o.addr)
	if err != nil {
		return nil, err
	}
	token, settings := randomToken(), w.Settings()
	settings["DATABASE_URL"], settings["WEFT_ADDR"], settings["WEFT_API_TOKEN"], settings["WEFT_ROLE"] = dbURL, o.addr, token, "all"
	if getenv("WEFT_LOG_LEVEL") == "" {
		settings["WEFT_LOG_LEVEL"] = "warn" // the story is the output; warnings and errors still show
	}
	cfg, err := loadConfig(overlay(getenv, settings))
	if err != nil {
		return nil, err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	base := "http://" + host

	model := "scripted (set WEFT_LLM_PROVIDER to use a real one)"
	if w.Model == nil {
		model = cfg.LLMProvider + " " + cfg.Model
	}
	fmt.Fprintf(stdout, "weft demo: Linear, Discord and a model are weft's own fakes, in this process;\n"+
		"weft serves them through its real webhooks, gateway and job queue.\n"+
		"   database  %s\n   model     %s\n   weft      %s\n", redact(dbURL), model, base)

	store, pool, err := openStore(ctx, &config{DatabaseURL: dbURL, DBConns: 2}, logger)
	if err != nil {
		return nil, err
	}
	defer pool.Close()

	// weft itself, as `weft serve` runs it: the one place the demo starts
	// it. The story stops when it does.
	serveCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	playCtx, stopPlay := context.WithCancel(ctx)
	defer stopPlay()
	var serveErr error
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer stopPlay()
		serveErr = serve(serveCtx, cfg, logger)
	}()
	stop := func() error {
		stopServe()
		<-served
		return serveErr
	}

	out, playErr := w.Play(playCtx, base, store, stdout)
	if ctx.Err() != nil {
		return out, stop() // Ctrl-C
	}
	select {
	case <-served:
		return out, serveErr // weft failed to start, or stopped
	default:
	}
	if playErr != nil {
		if o.exit {
			_ = stop()
			return out, fmt.Errorf("demo: %w", playErr)
		}
		fmt.Fprintf(stdout, "\nThe story stopped: %v\n", playErr) // what did happen is there to look at
	}
	fmt.Fprintf(stdout, "\nLook around:\n   console  %s/console/login?token=%s\n", base, token)
	if out != nil && out.ThreadID != uuid.Nil {
		fmt.Fprintf(stdout, "   API      curl -H 'Authorization: Bearer %s' %s/api/v1/threads/%s/stitches\n", token, base, out.ThreadID)
		fmt.Fprintf(stdout, "   CLI      DATABASE_URL='%s' weft thread show %s\n", redact(dbURL), out.ThreadID)
	}
	if o.exit {
		return out, stop()
	}
	fmt.Fprintf(stdout, "\nweft keeps serving on %s until Ctrl-C.\n", base)
	<-served
	return out, serveErr
}

// overlay is getenv with settings laid over it.
func overlay(getenv func(string) string, settings map[string]string) func(string) string {
	return func(key string) string {
		if v, ok := settings[key]; ok {
			return v
		}
		return getenv(key)
	}
}

// hostOf is where a client reaches a listen address: its host, or this
// machine's loopback when it listens on every interface.
func hostOf(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// randomToken is a fresh WEFT_API_TOKEN: the demo's console and API are
// reachable with the link it prints and nothing else, as Jupyter's are.
func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// redact hides a database URL's password.
func redact(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "(unparsable DATABASE_URL)"
	}
	return u.Redacted()
}
