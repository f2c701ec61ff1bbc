package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// Options are weft demo's flags.
type Options struct {
	Exit bool   // leave after the story
	Addr string // where weft serves
	// NotesServer is the command line that starts this program as the
	// demo's notes MCP server (ServeNotes); the notes file is appended to
	// it. weft starts it over stdio from the WEFT_MCP_CONFIG file the demo
	// writes.
	NotesServer []string
}

// Run serves weft against w's fakes, as `weft serve` runs it, and plays
// the story on it, then serves until ctx ends (or, with o.Exit, stops).
// The database is DATABASE_URL, or weft's default, as for `make run`.
func Run(ctx context.Context, w *World, o Options, getenv func(string) string, stdout, stderr io.Writer) (*Outcome, error) {
	host, err := hostOf(o.Addr)
	if err != nil {
		return nil, err
	}
	token, settings := randomToken(), w.Settings()
	if settings["WEFT_MCP_CONFIG"], err = w.writeMCPConfig(o.NotesServer); err != nil {
		return nil, err
	}
	settings["WEFT_ADDR"], settings["WEFT_API_TOKEN"], settings["WEFT_ROLE"] = o.Addr, token, "all"
	if getenv("WEFT_LOG_LEVEL") == "" {
		settings["WEFT_LOG_LEVEL"] = "warn" // the story is the output; warnings and errors still show
	}
	cfg, err := app.LoadConfig(overlay(getenv, settings))
	if err != nil {
		return nil, err
	}
	dbURL := cfg.DatabaseURL
	logger := app.NewLogger(stderr, cfg.LogLevel)
	base := "http://" + host

	model := "scripted (set WEFT_LLM_PROVIDER to use a real one)"
	if w.Model == nil {
		model = cfg.LLMProvider + " " + cfg.Model
	}
	fmt.Fprintf(stdout, "weft demo: Linear, Discord, Slack and a model are weft's own fakes, in this process;\n"+
		"weft serves them through its real webhooks, gateway and job queue, and calls a small MCP server\n"+
		"that ships with the demo.\n"+
		"   database  %s\n   model     %s\n   weft      %s\n", redact(dbURL), model, base)

	store, pool, err := app.OpenMigrated(ctx, &app.Config{DatabaseURL: dbURL, DBConns: 2}, logger)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	// The story continues a Linear session in Discord, which weft allows
	// only within one organisation, and in Slack weft remembers what it
	// saved in Linear, which it reads only within one: the demo links its
	// three tenants, as an operator would with `weft tenant link`.
	if err := store.LinkTenants(ctx, demoOrganisation, thread.LinearTenant(lineartest.OrganizationID), thread.DiscordTenant(guild),
		thread.SlackTenant(slacktest.TeamID)); err != nil {
		return nil, fmt.Errorf("demo: link tenants: %w", err)
	}
	fmt.Fprintf(stdout, "   tenants   the Linear workspace, the Discord server and the Slack workspace, linked as organisation %q\n", demoOrganisation)
	fmt.Fprintf(stdout, "   tools     the notes MCP server (stdio), from %s\n", settings["WEFT_MCP_CONFIG"])

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
		a, err := app.New(serveCtx, cfg, logger)
		if err != nil {
			serveErr = err
			return
		}
		serveErr = a.Run(serveCtx)
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
		if o.Exit {
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
	if o.Exit {
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
