// Package llmtest is a fake model provider: one HTTP server that speaks both
// the OpenAI chat completions and the Anthropic Messages wire formats, well
// enough for the official SDKs to parse its answers. Tests, `weft demo`,
// benchmarks and crash tests point weft at it by base URL.
//
// Replies are scripted ([Server.Enqueue]) or computed ([Server.SetDefault]),
// faults are injected per reply (status codes with Retry-After, delays, cut
// and malformed bodies), and every request is recorded in a protocol-neutral
// form ([Server.Requests]). A request that asks to stream gets its reply as
// the protocol's server-sent events (OpenAI chunks with tool_call deltas and
// usage; Anthropic's message_start … message_stop with input_json_delta),
// chunked, paced and cut as the Reply says. Like the real APIs, the fake rejects with 400 a
// conversation whose tool calls and tool results do not pair up.
//
// It imports nothing from weft but fakekit (which imports nothing from
// weft), so internal/llm's own tests can use it.
package llmtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/weft-dev/weft/internal/fakekit"
)

// arrivedBuffer is how many unread arrivals Arrived holds; past that, arrivals
// are not announced, so a benchmark that never reads it cannot block the fake.
const arrivedBuffer = 1024

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	arrived   chan Request
	done      chan struct{} // closed by Close, to free waiting handlers
	closeOnce sync.Once

	mu       sync.Mutex
	queue    []Reply
	def      func(Request) Reply
	requests []Request
	gate     chan struct{} // non-nil while blocked; closed on release
}

// NewServer starts a fake on a loopback port. With a non-nil t it is closed on
// t.Cleanup; NewServer(nil) is for callers without a test (`weft demo`), which
// must call Close.
func NewServer(t fakekit.TB) *Server {
	s := newServer()
	s.srv = httptest.NewServer(s.routes())
	fakekit.CloseAtEnd(t, s.Close)
	return s
}

// Start starts a fake listening on addr (such as "127.0.0.1:8089"), for a
// process that must be pointed at a known address. The caller must Close it.
func Start(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: start: %w", err)
	}
	s := newServer()
	s.srv = httptest.NewUnstartedServer(s.routes())
	_ = s.srv.Listener.Close() // the one httptest picked, replaced by ours
	s.srv.Listener = l
	s.srv.Start()
	return s, nil
}

func newServer() *Server {
	return &Server{arrived: make(chan Request, arrivedBuffer), done: make(chan struct{})}
}

// Close stops the fake, failing any request still waiting in it. It is safe
// to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// URL is the fake's base URL, without a trailing slash. The endpoints are
// URL()+"/v1/chat/completions" and URL()+"/v1/messages", so openai-go wants
// BaseURL [Server.OpenAIBaseURL] (URL()+"/v1") and anthropic-sdk-go wants
// [Server.AnthropicBaseURL] (URL() itself).
func (s *Server) URL() string { return s.srv.URL }

// OpenAIBaseURL is the base URL for an OpenAI-compatible client: URL()+"/v1".
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// AnthropicBaseURL is the base URL for an Anthropic client: URL().
func (s *Server) AnthropicBaseURL() string { return s.srv.URL }

// Enqueue appends replies to the script. Each valid request, of either
// protocol, takes the next one in arrival order; requests the fake rejects as
// malformed do not consume the script.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetDefault sets the reply for requests that find the script empty; nil
// restores the initial default, Reply{Text: "ok"}. f runs on the handler's
// goroutine, outside the fake's lock, so it may call the Server's methods.
func (s *Server) SetDefault(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = f
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls is the number of requests received so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Arrived receives each request as it arrives, before it is answered (and
// before it waits on [Server.Block]), so a test can wait for "a model call is
// in flight" without sleeping. It buffers 1024 unread arrivals and drops
// announcements beyond that.
func (s *Server) Arrived() <-chan Request { return s.arrived }

// Block makes requests wait before they are answered, until release is
// called, their context ends, or the server closes; a crash test uses it to
// kill a process mid-call. release is idempotent.
func (s *Server) Block() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.gate == gate {
				s.gate = nil
			}
			s.mu.Unlock()
			close(gate)
		})
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", s.handle(openAIWire{}))
	mux.Handle("POST /v1/messages", s.handle(anthropicWire{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A helpful 404: the usual mistake is a base URL with or without /v1.
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"type":    "not_found_error",
			"message": "llmtest: no route " + r.Method + " " + r.URL.Path + "; want POST /v1/chat/completions or /v1/messages",
		}})
	})
	return mux
}

// handle serves one protocol's endpoint: decode and record the request,
// announce it, wait while blocked, then answer with its reply.
func (s *Server) handle(p wire) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		req := Request{Protocol: p.name(), APIKey: p.apiKey(r.Header), Body: body}
		if err == nil {
			err = p.decode(body, &req)
		}
		reply, seq := s.arrive(req, err == nil)
		if err != nil {
			writeError(w, p, http.StatusBadRequest, "llmtest: "+err.Error())
			return
		}
		if !s.await(r.Context(), s.currentGate()) {
			return
		}
		s.answer(w, r, p, req, reply, seq)
	})
}

// maxPresized bounds the buffer readBody sizes from Content-Length alone.
const maxPresized = 32 << 20

// readBody reads the request body in one allocation when the client sent
// its length, as the SDKs do; io.ReadAll would start at 512 bytes and copy
// its way up to a request's tens of kilobytes.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxPresized {
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(r.Body)
}

// arrive records req and announces it, and for a valid request takes its
// reply. seq numbers the request (from 1), for generated ids.
func (s *Server) arrive(req Request, valid bool) (Reply, int) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	seq := len(s.requests)
	var reply Reply
	scripted := false
	if valid && len(s.queue) > 0 {
		reply, s.queue, scripted = s.queue[0], s.queue[1:], true
	}
	def := s.def
	s.mu.Unlock()

	select {
	case s.arrived <- req:
	default:
	}
	switch {
	case !valid || scripted:
	case def != nil:
		reply = def(req)
	default:
		reply = Reply{Text: "ok"}
	}
	return reply, seq
}

func (s *Server) currentGate() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate
}

// await waits for ch to close (a nil ch is open at once). It reports false
// when the request's context ended first, or the server is closing; then the
// connection is dropped without an answer.
func (s *Server) await(ctx context.Context, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		// Returning normally would send an empty 200, which a client could
		// mistake for an answer; aborting drops the connection instead.
		panic(http.ErrAbortHandler)
	}
}
