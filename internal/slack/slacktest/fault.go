package slacktest

import (
	"net/http"
	"strconv"
	"time"
)

// Fault is an answer injected in place of a Web API method's normal one.
type Fault struct {
	// Status is the HTTP status; zero means 200 (an ok:false answer).
	Status int
	// RetryAfter, when positive, is sent as Retry-After (whole seconds,
	// rounded up, as Slack does).
	RetryAfter time.Duration
	// Error is Slack's error string in an ok:false body; empty sends no
	// JSON body (a bare HTTP failure).
	Error string
	// Apply runs the method's normal effect first (the post is made), so
	// the client sees a failure for a request Slack applied: the ambiguous
	// case.
	Apply bool
	// Drop closes the connection without an answer instead, after Apply.
	Drop bool
	// Delay holds the answer this long (or until the client gives up),
	// after Apply: a post made whose answer is late.
	Delay time.Duration
}

// RateLimited is Slack's 429: Retry-After and error "ratelimited".
func RateLimited(retryAfter time.Duration) Fault {
	return Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Error: "ratelimited"}
}

// ErrorCode is an ok:false answer with Slack's error string, as for
// channel_not_found, not_in_channel or invalid_auth.
func ErrorCode(code string) Fault { return Fault{Error: code} }

// ServerError is a bare HTTP 5xx, as Slack's edge sends.
func ServerError(status int) Fault { return Fault{Status: status} }

// AppliedThenDropped is a write Slack applied whose answer never arrived:
// the connection closes once the post is made.
func AppliedThenDropped() Fault { return Fault{Apply: true, Drop: true} }

type faultRule struct {
	f    Fault
	left int // answers left; negative means forever
}

// Fail makes the next n calls of method (every call for n ≤ 0) answer f.
// Rules for one method run in the order added.
func (s *Server) Fail(method string, n int, f Fault) {
	if n <= 0 {
		n = -1
	}
	s.mu.Lock()
	s.faults[method] = append(s.faults[method], &faultRule{f: f, left: n})
	s.mu.Unlock()
}

// Heal removes every fault of method.
func (s *Server) Heal(method string) {
	s.mu.Lock()
	delete(s.faults, method)
	s.mu.Unlock()
}

// takeFault is the fault for this call of method, or nil.
func (s *Server) takeFault(method string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules := s.faults[method]
	for len(rules) > 0 && rules[0].left == 0 {
		rules = rules[1:]
	}
	s.faults[method] = rules
	if len(rules) == 0 {
		return nil
	}
	r := rules[0]
	if r.left > 0 {
		r.left--
	}
	f := r.f
	return &f
}

func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, f *Fault) {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
	}
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	if f.Error == "" {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, errBody(f.Error))
}
