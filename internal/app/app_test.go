package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

// TestMain lets the test binary stand in for `weft serve`: run with
// WEFT_TEST_AS_WEFT=1 it serves as configured by its environment, so the
// crash tests can run it as a real subprocess and SIGKILL it, without a
// separate build.
func TestMain(m *testing.M) {
	if os.Getenv(asMCPServer) == "1" {
		os.Exit(serveDyingMCP()) // a stdio MCP server of weft serve's (toolcrash_test.go)
	}
	if os.Getenv("WEFT_TEST_AS_WEFT") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runServe(ctx, os.Getenv, os.Stderr)
		stop()
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runServe is `weft serve` with this environment, logging to stderr.
func runServe(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return err
	}
	a, err := New(ctx, cfg, NewLogger(stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// enqueuer is an app on the database at url that only enqueues, as
// `weft thread create --detach` builds it.
func enqueuer(t *testing.T, url string) *App {
	t.Helper()
	cfg, err := LoadConfig(env(map[string]string{"DATABASE_URL": url, "WEFT_ROLE": "api"}))
	require.NoError(t, err)
	a, err := New(context.Background(), cfg, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return a
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestServe(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	addr := servetest.Addr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, env(map[string]string{"DATABASE_URL": url, "WEFT_ADDR": addr}), &stderr)
	}()

	base := "http://" + addr
	servetest.WaitReady(t, base)

	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	var body map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok", body["database"])

	// The home page names the platforms and points a browser at the
	// console, the health check and the API's description.
	resp, err = http.Get(base + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Contains(t, string(page), "Linear, Discord, Slack and GitHub")
	for _, link := range []string{`href="/console"`, `href="/healthz"`, `href="/api/v1/openapi.json"`} {
		require.Contains(t, string(page), link)
	}

	cancel() // what SIGTERM does through signal.NotifyContext
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	// Every log line is JSON with no key twice, the request log names the
	// request, and each door says whether it is on.
	var sawRequest bool
	doors := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		require.NoError(t, noDuplicateKeys(line), line)
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == "http request" && rec["path"] == "/readyz" {
			sawRequest = true
			require.NotEmpty(t, rec["request_id"])
		}
		if name, ok := rec["door"].(string); ok {
			doors[name] = rec["msg"].(string)
			require.NotEmpty(t, rec["why"], line)
		}
	}
	require.True(t, sawRequest)
	require.Equal(t, map[string]string{"api": "door off", "linear": "door off", "discord": "door off", "slack": "door off", "github": "door off", "model": "door off"}, doors)
}

// noDuplicateKeys reports a JSON object with a key twice at its top level,
// which encoding/json would silently read as the last.
func noDuplicateKeys(line string) error {
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		if seen[key] {
			return errors.New("duplicate key " + key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

func TestDoors(t *testing.T) {
	t.Parallel()
	a := &App{cfg: &Config{APIToken: "t", LLMProvider: "openai", Model: "m", FastModel: "f",
		Linear: surfacelinear.Config{WebhookSecret: "s"}, Discord: surfacediscord.Config{}},
		platforms: []surface.Platform{&surfacelinear.App{}, &surfacediscord.App{}, &surfaceslack.App{}, &surfacegithub.App{}}}
	on := map[string]bool{}
	for _, d := range a.doors() {
		on[d.Name] = d.On
		require.NotEmpty(t, d.Why, d.Name)
	}
	require.Equal(t, map[string]bool{"api": true, "linear": false, "discord": false, "slack": false, "github": false, "model": true}, on)
}

func TestServeRefusesWithoutDatabase(t *testing.T) {
	t.Parallel()
	// Migrations need the database, so serve refuses to start without it.
	err := runServe(context.Background(),
		env(map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", "WEFT_ADDR": servetest.Addr(t)}),
		&bytes.Buffer{})
	require.Error(t, err)
}
