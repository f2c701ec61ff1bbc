package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Reply scripts the fake's answer to one request. The zero Reply is a 200
// with empty text; fault fields take precedence in the order Status,
// Malformed, RawBody, then Cut.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Status, when neither 0 nor 200, answers with this status and the
	// protocol's error body (429, 500, 529, 401, …).
	Status int
	// ErrorMessage replaces the error body's message of a Status reply, for
	// errors told apart by their text (OpenAI's "maximum context length",
	// Anthropic's "prompt is too long").
	ErrorMessage string
	// RetryAfter sets the Retry-After (whole seconds, rounded up) and
	// retry-after-ms headers, as both providers send them.
	RetryAfter time.Duration
	// Delay waits before answering, or until the request's context ends.
	Delay time.Duration
	// Cut writes the headers and half of a valid body, then closes the
	// connection.
	Cut bool
	// Malformed answers 200 with a JSON body that stops mid-way.
	Malformed bool
	// RawBody answers 200 with exactly these bytes as application/json, for
	// bodies that parse but are wrong (such as "{}").
	RawBody string
	// InputTokens and OutputTokens are reported as usage; zero means an
	// estimate of a token per four bytes, so demos show plausible numbers.
	InputTokens, OutputTokens int

	// The fields below shape a streamed answer, to a request that asked
	// for one ("stream": true); a plain request ignores them. Status,
	// Malformed and RawBody apply to streams as they are.

	// Chunk is how many runes of text (and of tool arguments) each delta
	// carries; 0 streams the text a word at a time.
	Chunk int
	// Pace is the wait before each delta after the first.
	Pace time.Duration
	// Step, when set, is received from before each delta after the first:
	// a test paces the stream itself, one send per delta.
	Step <-chan struct{}
	// CutAfter drops the connection after this many deltas, without the
	// stream's end; Cut on a stream drops it after half of them.
	CutAfter int
	// ErrorAfter sends the protocol's error event after this many deltas
	// and ends the stream there, as a provider overloaded mid-answer does
	// (Anthropic's overloaded_error, OpenAI's server_error).
	ErrorAfter int
}

// ToolCall is a tool call in a [Reply] or a recorded [Message].
type ToolCall struct {
	// ID is filled in when empty: "call_<request>_<n>" or "toolu_<request>_<n>".
	ID   string
	Name string
	// Arguments is JSON text; empty means "{}".
	Arguments string
}

// wire is one protocol's side of the fake: how its requests decode and how
// its answers look.
type wire interface {
	name() string
	apiKey(h http.Header) string
	decode(body []byte, req *Request) error
	// success is the body of a 200 answer to req.
	success(req Request, reply Reply, seq int) any
	// failure is the body of an error answer.
	failure(status int, msg string) any
	// truncated is a body that starts as a success and breaks off.
	truncated() string
	// events is the server-sent events of a streamed success.
	events(req Request, reply Reply, seq int) []event
	// streamError is the event that fails a stream midway.
	streamError() event
	requestIDHeader() string
}

// answer writes reply, after its delay, in p's format.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, p wire, req Request, reply Reply, seq int) {
	if reply.Delay > 0 {
		elapsed := make(chan struct{})
		t := time.AfterFunc(reply.Delay, func() { close(elapsed) })
		defer t.Stop()
		if !s.await(r.Context(), elapsed) {
			return
		}
	}
	w.Header().Set(p.requestIDHeader(), "req_llmtest_"+strconv.Itoa(seq))
	if d := reply.RetryAfter; d > 0 {
		secs := (d + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(max(1, d.Milliseconds()), 10))
	}
	switch {
	case reply.Status != 0 && reply.Status != http.StatusOK:
		msg := reply.ErrorMessage
		if msg == "" {
			msg = "llmtest: scripted status " + strconv.Itoa(reply.Status)
		}
		writeError(w, p, reply.Status, msg)
	case reply.Malformed:
		writeBody(w, []byte(p.truncated()))
	case reply.RawBody != "":
		writeBody(w, []byte(reply.RawBody))
	case req.Stream:
		s.stream(w, r, p, p.events(req, reply, seq), reply)
	default:
		body, err := json.Marshal(p.success(req, reply, seq))
		if err != nil {
			writeError(w, p, http.StatusInternalServerError, "llmtest: encode reply: "+err.Error())
			return
		}
		if reply.Cut {
			writeCut(w, body)
			return
		}
		writeBody(w, body)
	}
}

func writeError(w http.ResponseWriter, p wire, status int, msg string) {
	writeJSON(w, status, p.failure(status, msg))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v) // only maps and structs of strings and numbers
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// writeCut promises the whole body in Content-Length, sends half, and closes
// the connection: what a client sees when a proxy or the provider dies
// mid-answer.
func writeCut(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body[:len(body)/2])
	rc := http.NewResponseController(w)
	// Hijack flushes the headers but drops what sits in the response's own
	// buffer, so the half body is flushed first.
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): aborting the handler resets the stream,
		// which cuts the body just the same.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// fillIDs gives every tool call an id, prefix_<seq>_<n> when it has none.
func fillIDs(calls []ToolCall, prefix string, seq int) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = prefix + "_" + strconv.Itoa(seq) + "_" + strconv.Itoa(i+1)
		}
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		out[i] = c
	}
	return out
}

// usage is the token counts to report for reply to a request of body.
func usage(reply Reply, body []byte) (in, out int) {
	in, out = reply.InputTokens, reply.OutputTokens
	if in == 0 {
		in = len(body)/4 + 1
	}
	if out == 0 {
		n := len(reply.Text)
		for _, c := range reply.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
		out = n/4 + 1
	}
	return in, out
}
