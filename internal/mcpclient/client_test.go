package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// httpServer serves f's fault server over Streamable HTTP.
func httpServer(t *testing.T, f *faults) string {
	t.Helper()
	s := faultServer(f)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// stdioServer is an entry that starts the fault server (this test binary)
// over stdio.
func stdioServer(t *testing.T, callsFile string) Server {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return Server{Command: exe, Env: map[string]string{faultServerEnv: "1", callsFileEnv: callsFile}}
}

// running starts a Manager for cfg and stops it when the test ends.
func running(t *testing.T, cfg *Config) *Manager {
	t.Helper()
	for name, s := range cfg.Servers {
		if s.Weft.Approval == "" {
			s.Weft.Approval = ApprovalWrites
			cfg.Servers[name] = s
		}
	}
	m := New(Deps{Config: cfg, Logger: logtest.New(t), Backoff: retry.Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

// waitTools waits until the offered tools satisfy ok.
func waitTools(t *testing.T, m *Manager, ok func(names []string) bool) []tools.Tool {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		changed := m.Changed()
		ts := m.Tools()
		names := make([]string, len(ts))
		for i, tl := range ts {
			names[i] = tl.Name
		}
		if ok(names) {
			return ts
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("tools never became as wanted; have %v", names)
		}
	}
}

func has(name string) func([]string) bool {
	return func(n []string) bool { return slices.Contains(n, name) }
}

func call(t *testing.T, ctx context.Context, ts []tools.Tool, name, args string) (string, error) {
	t.Helper()
	i := slices.IndexFunc(ts, func(tl tools.Tool) bool { return tl.Name == name })
	require.GreaterOrEqual(t, i, 0, "no tool %s", name)
	return ts[i].Handler(ctx, tools.Call{ThreadID: uuid.New(), Arguments: json.RawMessage(args)})
}

// callAttaching calls a tool as a turn does, collecting the images its
// result carries.
func callAttaching(t *testing.T, ctx context.Context, ts []tools.Tool, name, args string) (string, []thread.Image, error) {
	t.Helper()
	i := slices.IndexFunc(ts, func(tl tools.Tool) bool { return tl.Name == name })
	require.GreaterOrEqual(t, i, 0, "no tool %s", name)
	var images []thread.Image
	out, err := ts[i].Handler(ctx, tools.Call{ThreadID: uuid.New(), Arguments: json.RawMessage(args),
		Attach: func(img thread.Image) { images = append(images, img) }})
	return out, images, err
}

func TestHTTPServerTools(t *testing.T) {
	t.Parallel()
	f := &faults{started: make(chan struct{}, 4), cancelled: make(chan struct{}, 4)}
	url := httpServer(t, f)
	m := running(t, &Config{Servers: map[string]Server{"faults": {URL: url, Weft: Settings{Timeout: duration(300 * time.Millisecond)}}}})
	ts := waitTools(t, m, has("mcp__faults__echo"))
	ctx := t.Context()

	names := make([]string, len(ts))
	for i, tl := range ts {
		names[i] = tl.Name
	}
	require.NotContains(t, names, "mcp__faults__bad_schema", "a tool whose schema does not resolve is left out")
	byName := map[string]tools.Tool{}
	for _, tl := range ts {
		byName[tl.Name] = tl
	}
	require.False(t, byName["mcp__faults__echo"].NeedsApproval, "read-only runs at once under writes")
	require.False(t, byName["mcp__faults__echo"].SideEffects)
	require.True(t, byName["mcp__faults__write"].NeedsApproval)
	require.True(t, byName["mcp__faults__write"].SideEffects)
	require.JSONEq(t, string(objectSchema), string(byName["mcp__faults__echo"].Schema), "the schema is passed through")

	out, err := call(t, ctx, ts, "mcp__faults__echo", `{"text":"hi"}`)
	require.NoError(t, err)
	require.Equal(t, "echo: hi", out)

	out, err = call(t, ctx, ts, "mcp__faults__write", `{}`)
	require.NoError(t, err)
	require.Equal(t, "written\n{\"writes\":1}", out, "text and structuredContent reach the model")
	require.EqualValues(t, 1, f.writes.Load())

	_, err = call(t, ctx, ts, "mcp__faults__fail", `{}`)
	require.EqualError(t, err, "no such row", "isError is a tool error the model sees")

	out, err = call(t, ctx, ts, "mcp__faults__image", `{}`)
	require.NoError(t, err)
	require.Equal(t, "a chart\n[image image/png, 9 bytes, not shown]", out, "with nowhere to attach it, an image is a placeholder")
	out, images, err := callAttaching(t, ctx, ts, "mcp__faults__image", `{}`)
	require.NoError(t, err)
	require.Equal(t, "a chart\n[image image/png, 9 bytes, attached]", out)
	require.Equal(t, []thread.Image{{MediaType: "image/png", Data: []byte("png-bytes")}}, images, "the image reaches the model whole")

	_, err = call(t, ctx, ts, "mcp__faults__echo", `[1]`)
	require.ErrorContains(t, err, "not a JSON object")

	_, err = call(t, ctx, ts, "mcp__faults__hang", `{}`)
	require.ErrorContains(t, err, "took longer than 300ms and was cancelled")
	<-f.started
	<-f.cancelled // the server was told (notifications/cancelled)

	// The turn's context ending (an abort, a lost lease) cancels the call.
	turn, stop := context.WithCancelCause(ctx)
	errs := make(chan error, 1)
	go func() { _, err := call(t, turn, ts, "mcp__faults__hang", `{}`); errs <- err }()
	<-f.started
	stop(errAborted)
	require.ErrorIs(t, <-errs, errAborted)
	<-f.cancelled

	_, err = call(t, ctx, ts, "mcp__faults__grow", `{}`)
	require.NoError(t, err)
	waitTools(t, m, has("mcp__faults__late0")) // refreshed on notifications/tools/list_changed
}

var errAborted = context.Canceled

func TestStdioServerRestartsAfterDying(t *testing.T) {
	t.Parallel()
	calls := t.TempDir() + "/calls"
	m := running(t, &Config{Servers: map[string]Server{"local": stdioServer(t, calls)}})
	ts := waitTools(t, m, has("mcp__local__die"))
	first := m.Changed()
	_, err := call(t, t.Context(), ts, "mcp__local__die", `{}`)
	require.ErrorContains(t, err, "the call to die failed", "a server that dies mid-call is a tool error")
	<-first // it went away...
	ts = waitTools(t, m, has("mcp__local__echo"))
	out, err := call(t, t.Context(), ts, "mcp__local__echo", `{"text":"back"}`) // ...and was started again
	require.NoError(t, err)
	require.Equal(t, "echo: back", out)
}

func TestSettingsFilterAndApprove(t *testing.T) {
	t.Parallel()
	url := httpServer(t, &faults{})
	m := running(t, &Config{Servers: map[string]Server{
		"all":  {URL: url, Weft: Settings{Tools: []string{"echo", "wr*"}, Approval: ApprovalAlways}},
		"none": {URL: url, Weft: Settings{Tools: []string{"write"}, Approval: ApprovalNever}},
	}})
	ts := waitTools(t, m, func(n []string) bool { return len(n) == 3 })
	got := map[string]bool{}
	for _, tl := range ts {
		got[tl.Name] = tl.NeedsApproval
	}
	require.Equal(t, map[string]bool{"mcp__all__echo": true, "mcp__all__write": true, "mcp__none__write": false}, got)
}

func TestCheckNamesTheFailingServer(t *testing.T) {
	t.Parallel()
	url := httpServer(t, &faults{})
	m := New(Deps{Config: &Config{Servers: map[string]Server{
		"good":   {URL: url, Weft: Settings{Approval: ApprovalWrites}},
		"broken": {Command: t.TempDir() + "/no-such-server", Weft: Settings{Approval: ApprovalWrites}},
	}}, Logger: logtest.New(t)})
	var buf bytes.Buffer
	err := PrintReports(&buf, m.Check(t.Context()))
	require.EqualError(t, err, "mcp servers failed: broken")
	require.Contains(t, buf.String(), "broken: FAILED")
	require.Regexp(t, `mcp__good__echo\s+runs at once`, buf.String())
	require.Regexp(t, `mcp__good__write\s+waits for approval`, buf.String())
}

// A server's "organisations" go with its tools, which are offered to
// those organisations' conversations only; none offers them to all.
func TestOrganisationsPerServer(t *testing.T) {
	t.Parallel()
	url := httpServer(t, &faults{})
	cfg := &Config{Servers: map[string]Server{
		"shared": {URL: url, Weft: Settings{Tools: []string{"echo"}}},
		"acme":   {URL: url, Weft: Settings{Tools: []string{"echo"}, Organisations: []string{"acme", "linear:org-9"}}},
	}}
	m := running(t, cfg)
	ts := waitTools(t, m, func(n []string) bool { return len(n) == 2 })
	offered := func(org string) []string {
		var out []string
		for _, tl := range ts {
			if tl.OfferedTo(org) {
				out = append(out, tl.Name)
			}
		}
		return out
	}
	for org, want := range map[string][]string{
		"acme":         {"mcp__acme__echo", "mcp__shared__echo"},
		"linear:org-9": {"mcp__acme__echo", "mcp__shared__echo"},
		"globex":       {"mcp__shared__echo"},
		"":             {"mcp__shared__echo"}, // the operator's, for API and CLI threads
	} {
		require.Equal(t, want, offered(org), "organisation %q", org)
		servers := []string{"shared"}
		if len(want) == 2 {
			servers = []string{"acme", "shared"}
		}
		require.Equal(t, servers, cfg.ServersFor(org), "organisation %q", org)
	}
}
