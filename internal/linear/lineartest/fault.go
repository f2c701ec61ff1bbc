package lineartest

import (
	"net/http"
	"strconv"
	"time"
)

// Fault is a failure the fake serves instead of (or after) handling a
// request. The zero Fault is an HTTP 500.
type Fault struct {
	// Status is the HTTP status to answer with; 0 means 500, or 400 for a
	// rate limit, or 200 for a GraphQL error (Code set).
	Status int
	// RateLimitReset, when set, answers with Linear's RATELIMITED error and
	// X-RateLimit-*-Reset headers this far in the future.
	RateLimitReset time.Duration
	// Code and Message, when Code is set, answer with a GraphQL error
	// carrying extensions.code = Code.
	Code, Message string
	// Delay holds the answer back this long, or until the client gives up.
	// A Fault with only Delay set is a slow success.
	Delay time.Duration
	// AfterHandling applies the request (e.g. records the activity) before
	// failing: the answer is lost, not the write.
	AfterHandling bool
}

// ServerError answers with an HTTP status such as 502 or 503.
func ServerError(status int) Fault { return Fault{Status: status} }

// RateLimited answers with RATELIMITED; the limit resets after reset.
func RateLimited(reset time.Duration) Fault { return Fault{RateLimitReset: reset} }

// Slow answers normally after d, or never if the client cancels first.
func Slow(d time.Duration) Fault { return Fault{Delay: d} }

// LostResponse applies the request, then answers 502, as when a proxy
// drops Linear's answer.
func LostResponse() Fault { return Fault{Status: http.StatusBadGateway, AfterHandling: true} }

// GraphQLError answers HTTP 200 with one GraphQL error.
func GraphQLError(code, message string) Fault { return Fault{Code: code, Message: message} }

type injected struct {
	op    string
	times int
	f     Fault
}

// Inject serves f for the next times requests of the GraphQL operation
// (by operationName; "" matches any). Faults apply in the order injected.
func (s *Server) Inject(operation string, times int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &injected{op: operation, times: times, f: f})
}

// takeFault returns the fault for a request of operation op, if any.
func (s *Server) takeFault(op string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, in := range s.faults {
		if in.op != "" && in.op != op {
			continue
		}
		in.times--
		if in.times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return in.f, true
	}
	return Fault{}, false
}

// failing reports whether f fails the request, rather than only slowing it.
func (f Fault) failing() bool {
	return f.Status != 0 || f.RateLimitReset > 0 || f.Code != "" || f.Delay == 0
}

func (f Fault) write(w http.ResponseWriter) {
	switch {
	case f.RateLimitReset > 0:
		reset := time.Now().Add(f.RateLimitReset).UnixMilli()
		h := w.Header()
		h.Set("X-RateLimit-Requests-Limit", "5000")
		h.Set("X-RateLimit-Requests-Remaining", "0")
		h.Set("X-RateLimit-Requests-Reset", strconv.FormatInt(reset, 10))
		h.Set("X-RateLimit-Complexity-Limit", "2000000")
		h.Set("X-RateLimit-Complexity-Remaining", "1999000")
		// A complexity reset far away: the client must pick the exhausted
		// bucket's reset, not the latest one.
		h.Set("X-RateLimit-Complexity-Reset", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
		// Linear answers 400, with the HTTP meaning in statusCode.
		writeErrors(w, orStatus(f.Status, http.StatusBadRequest), gqlError{
			Message: "Rate limit exceeded",
			Extensions: map[string]any{
				"code": "RATELIMITED", "type": "ratelimited", "statusCode": 429,
				"userPresentableMessage": "Rate limit exceeded.",
			},
		})
	case f.Code != "":
		writeErrors(w, orStatus(f.Status, http.StatusOK), gqlError{
			Message: orText(f.Message, "injected error"), Extensions: map[string]any{"code": f.Code},
		})
	case orStatus(f.Status, http.StatusInternalServerError) == http.StatusInternalServerError:
		writeErrors(w, http.StatusInternalServerError, gqlError{
			Message: "Internal server error", Extensions: map[string]any{"code": "INTERNAL_SERVER_ERROR"},
		})
	default:
		// Gateways answer in HTML, not GraphQL.
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte("<html><body>" + http.StatusText(f.Status) + "</body></html>"))
	}
}

func orStatus(status, def int) int {
	if status == 0 {
		return def
	}
	return status
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
