package fakekit

import (
	"cmp"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Fault is how a fake misbehaves for one request, named by what the
// client sees. Each fake renders a failing Fault in its platform's own
// words (GraphQL errors, JSON error codes, an ok:false body),
// so a test says what happens, and the fake says it faithfully.
//
// The zero Fault fails with the platform's HTTP 500.
type Fault struct {
	// Status is the HTTP status to fail with; 0 means the platform's usual
	// one for the fault (500, or what its rate limits and error codes use).
	Status int
	// RetryAfter, when positive, makes the fault a rate limit: the client
	// is told, in the platform's headers and body, to wait this long.
	RetryAfter time.Duration
	// Code is the platform's error code (a GraphQL extensions.code, a
	// JSON error code, an error string), and Message its text.
	Code, Message string
	// Body, when set, is sent as it is with Header and Status, instead of
	// the platform's error: an answer from a proxy in front of the API.
	Body   string
	Header http.Header
	// Delay holds the answer back this long, or until the client gives up.
	// A Fault with only Delay (and Apply) set is a late success.
	Delay time.Duration
	// Apply makes the fake apply the request (the post is made) before
	// the fault: the client cannot tell whether its write happened.
	Apply bool
	// Drop closes the connection without an answer.
	Drop bool
}

// Fail fails with HTTP status in the platform's error answer for it.
func Fail(status int) Fault { return Fault{Status: status} }

// RateLimited is the platform's rate limit, telling the client to retry
// after retryAfter.
func RateLimited(retryAfter time.Duration) Fault { return Fault{RetryAfter: retryAfter} }

// ErrorCode fails with the platform's error code.
func ErrorCode(code string) Fault { return Fault{Code: code} }

// Slow answers normally after d, or never if the client gives up first.
func Slow(d time.Duration) Fault { return Fault{Delay: d} }

// Dropped closes the connection without applying the request.
func Dropped() Fault { return Fault{Drop: true} }

// LostResponse applies the request, then closes the connection: a write
// the platform made whose answer never arrived.
func LostResponse() Fault { return Fault{Apply: true, Drop: true} }

// AfterApplying is f served after the request is applied, as when a proxy
// fails a request the platform behind it handled.
func (f Fault) AfterApplying() Fault {
	f.Apply = true
	return f
}

// RetryAfterSeconds is RetryAfter as a Retry-After header holds it: whole
// seconds, rounded up, as the platforms send it.
func (f Fault) RetryAfterSeconds() string {
	return strconv.Itoa(int((f.RetryAfter + time.Second - 1) / time.Second))
}

// fails reports whether f fails the request, rather than only delaying it.
func (f Fault) fails() bool {
	return f.Status != 0 || f.RetryAfter > 0 || f.Code != "" || f.Body != "" || f.Drop || f.Delay == 0
}

// Serve answers a request under f. handle is the request's normal answer;
// fail writes the platform's answer for a failing f without a Body.
func Serve(w http.ResponseWriter, r *http.Request, f Fault, handle func(http.ResponseWriter), fail func(http.ResponseWriter, Fault)) {
	var applied *httptest.ResponseRecorder
	if f.Apply {
		applied = httptest.NewRecorder()
		handle(applied)
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	switch {
	case f.Drop:
		drop(w)
	case !f.fails() && applied != nil:
		replay(w, applied)
	case !f.fails():
		handle(w)
	case f.Body != "":
		for k, vs := range f.Header {
			w.Header()[k] = append(w.Header()[k], vs...)
		}
		w.WriteHeader(cmp.Or(f.Status, http.StatusInternalServerError))
		_, _ = w.Write([]byte(f.Body))
	default:
		fail(w, f)
	}
}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

// replay writes an answer recorded while applying the request.
func replay(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// orStatus is status, or def when status is 0.
// Faults is a fake's schedule of faults by route: what the fake names a
// request by (a GraphQL operation, "METHOD /path", a Web API method). A
// fake embeds it, so that every fake takes faults with the same calls.
// The zero Faults has none.
type Faults struct {
	mu    sync.Mutex
	rules []*rule
}

type rule struct {
	route string
	left  int // requests left; negative means every one until Heal
	f     Fault
}

// Fail serves f for the next times requests of route ("" is every route),
// or for every one until Heal when times ≤ 0. Rules matching one request
// apply in the order added.
func (fs *Faults) Fail(route string, times int, f Fault) {
	if times <= 0 {
		times = -1
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rules = append(fs.rules, &rule{route: route, left: times, f: f})
}

// Heal removes every rule of route.
func (fs *Faults) Heal(route string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rules = slices.DeleteFunc(fs.rules, func(r *rule) bool { return r.route == route })
}

// Take is the fault for a request of route, if a rule has one; the fake
// calls it once a request.
func (fs *Faults) Take(route string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, r := range fs.rules {
		if r.route != "" && r.route != route {
			continue
		}
		if r.left > 0 {
			r.left--
			if r.left == 0 {
				fs.rules = append(fs.rules[:i:i], fs.rules[i+1:]...)
			}
		}
		return r.f, true
	}
	return Fault{}, false
}
