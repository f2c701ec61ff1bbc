package mcpclient

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/retry"
)

// signalling passes records on to its handler and reports each one
// whose message is msg on ch: an event a test waits for.
type signalling struct {
	slog.Handler
	msg string
	ch  chan<- slog.Record
}

func (s signalling) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == s.msg {
		s.ch <- r
	}
	return s.Handler.Handle(ctx, r)
}

func (s signalling) WithAttrs(as []slog.Attr) slog.Handler {
	return signalling{Handler: s.Handler.WithAttrs(as), msg: s.msg, ch: s.ch}
}

func (s signalling) WithGroup(name string) slog.Handler {
	return signalling{Handler: s.Handler.WithGroup(name), msg: s.msg, ch: s.ch}
}

// TestBrokenServerLeavesTheRestWorking: a server that cannot start is
// logged and started again and again after its backoff, its tools left
// out, while the other server's tools are offered and answer.
func TestBrokenServerLeavesTheRestWorking(t *testing.T) {
	t.Parallel()
	url := httpServer(t, &faults{})
	failures := make(chan slog.Record, 64)
	logger := slog.New(signalling{Handler: logtest.New(t).Handler(), msg: "mcp server unavailable", ch: failures})
	m := New(Deps{Config: &Config{Servers: map[string]Server{
		"good":   {URL: url, Weft: Settings{Approval: ApprovalWrites}},
		"broken": {Command: t.TempDir() + "/no-such-server", Weft: Settings{Approval: ApprovalWrites}},
	}}, Logger: logger, Backoff: retry.Backoff{Base: time.Millisecond, Max: 4 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		for {
			select {
			case <-failures: // keep the failing server's loop from blocking on a full channel
			case <-done:
				return
			}
		}
	})

	ts := waitTools(t, m, has("mcp__good__echo"))
	for _, tl := range ts {
		require.False(t, strings.HasPrefix(tl.Name, "mcp__broken__"), tl.Name)
	}
	out, err := call(t, ctx, ts, "mcp__good__echo", `{"text":"still works"}`)
	require.NoError(t, err)
	require.Equal(t, "echo: still works", out)
	for range 3 { // not given up on: tried again after each backoff
		r := <-failures
		var wait time.Duration
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "retry_in" {
				wait = a.Value.Duration()
			}
			return true
		})
		require.Positive(t, wait, "a failure says when it is tried again")
	}
}
