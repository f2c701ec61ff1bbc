// Package mcpclient makes weft an MCP client: it reads a WEFT_MCP_CONFIG
// file (the "mcpServers" shape other MCP clients read), connects to each
// server with the official Go SDK (stdio servers are started once per
// replica and restarted with backoff when they die; Streamable HTTP servers
// get the SDK's session handling), keeps each server's tools/list cached
// and fresh on notifications/tools/list_changed, and offers the tools to
// the agent as mcp__SERVER__TOOL.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/tools"
)

// DefaultBackoff spaces the restarts of a server that failed: quickly at
// first, then once a minute, so a server that is down costs little.
var DefaultBackoff = retry.Backoff{Base: time.Second, Max: time.Minute, Jitter: 0.2}

// Deps is what a Manager needs.
type Deps struct {
	Config *Config
	Logger *slog.Logger
	// Backoff spaces a failed server's restarts; zero is DefaultBackoff.
	Backoff retry.Backoff
	// HTTPClient reaches Streamable HTTP servers; nil is a client without
	// a timeout (calls are bounded by each server's timeout).
	HTTPClient *http.Client
}

// Manager holds the connections to the configured servers and offers
// their tools. Run keeps them connected; Tools is safe to call meanwhile.
type Manager struct {
	d       Deps
	servers []*server

	mu      sync.Mutex
	changed chan struct{}
}

// Changed is closed at the next change of the tools offered (a server
// connected, lost or changed its list): a test's or a check's waiter.
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

func (m *Manager) notify() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.changed)
	m.changed = make(chan struct{})
}

// New returns a Manager for d.Config's servers; nothing connects before
// Run.
func New(d Deps) *Manager {
	if d.Backoff == (retry.Backoff{}) {
		d.Backoff = DefaultBackoff
	}
	if d.HTTPClient == nil {
		d.HTTPClient = &http.Client{}
	}
	m := &Manager{d: d, changed: make(chan struct{})}
	for _, name := range d.Config.Names() {
		m.servers = append(m.servers, &server{name: name, cfg: d.Config.Servers[name], m: m,
			logger: d.Logger.With("mcp_server", name), refresh: make(chan struct{}, 1)})
	}
	return m
}

// Run connects every server and keeps it connected until ctx ends: a
// server that cannot start or that dies is logged and started again after
// a backoff, its tools left out meanwhile.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() { s.run(ctx) })
	}
	wg.Wait()
}

// Tools are the tools the connected servers offer now, in the servers'
// order; a registry source (tools.Registry.AddSource).
func (m *Manager) Tools() []tools.Tool {
	var out []tools.Tool
	for _, s := range m.servers {
		s.mu.Lock()
		out = append(out, s.tools...)
		s.mu.Unlock()
	}
	return out
}

// server is one configured server and its live session.
type server struct {
	name    string
	cfg     Server
	m       *Manager
	logger  *slog.Logger
	refresh chan struct{}

	mu      sync.Mutex
	session *mcp.ClientSession
	tools   []tools.Tool
}

func (s *server) run(ctx context.Context) {
	for attempt := 0; ; {
		err := s.serve(ctx)
		if ctx.Err() != nil {
			return
		}
		attempt++
		wait := s.m.d.Backoff.Jittered(attempt)
		s.logger.WarnContext(ctx, "mcp server unavailable", slog.Any("error", err), slog.Duration("retry_in", wait))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err == nil || errors.Is(err, errSessionEnded) {
			// It served a while: the next failure starts the schedule over.
			attempt = 0
		}
	}
}

// errSessionEnded is a session that was up and ended (the stdio server
// exited, the HTTP session was lost).
var errSessionEnded = errors.New("session ended")

// serve connects, offers the server's tools while the session lasts, and
// returns why it ended.
func (s *server) serve(ctx context.Context) error {
	cs, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	if err := s.list(ctx, cs); err != nil {
		return err
	}
	s.mu.Lock()
	s.session = cs
	n := len(s.tools)
	s.mu.Unlock()
	s.logger.InfoContext(ctx, "mcp server connected", slog.Int("tools", n))
	s.m.notify()
	defer func() {
		s.mu.Lock()
		s.session, s.tools = nil, nil
		s.mu.Unlock()
		s.m.notify()
	}()
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			return fmt.Errorf("%w: %v", errSessionEnded, err)
		case <-s.refresh:
			if err := s.list(ctx, cs); err != nil {
				return err
			}
			s.logger.InfoContext(ctx, "mcp tools changed", slog.Int("tools", len(s.Tools())))
			s.m.notify()
		}
	}
}

// Tools are the server's tools as offered now.
func (s *server) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// connect starts or reaches the server and initialises a session.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "weft", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.refresh <- struct{}{}:
			default:
			}
		},
	})
	var t mcp.Transport
	if s.cfg.URL != "" {
		hc := *s.m.d.HTTPClient
		hc.Transport = headers{base: hc.Transport, h: s.cfg.Headers}
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &hc}
	} else {
		// The server runs as long as weft does, not as long as ctx: it
		// is stopped by closing its session.
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		if len(s.cfg.Env) > 0 {
			env := cmd.Environ()
			for k, v := range s.cfg.Env {
				env = append(env, k+"="+v)
			}
			cmd.Env = env
		}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Weft.CallTimeout())
	defer cancel()
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return cs, nil
}

// headers adds an entry's "headers" to each request to its server.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
