package lineartest

import (
	"net/http"
	"strconv"
	"time"
)

// RequestsPerHour is the fake's request limit per workspace, Linear's for
// an OAuth app.
const RequestsPerHour = 5000

// requestWindow is one workspace's hour of requests, for the
// X-RateLimit-Requests-* headers Linear sends on every answer.
type requestWindow struct {
	start time.Time
	used  int
}

// SetRequestsRemaining makes the fake report n requests remaining for the
// workspace this hour, as if other clients of the same app user had spent
// the rest: the next answers count down from n. The fake only reports it;
// it does not refuse requests past the limit (Fail does that).
func (s *Server) SetRequestsRemaining(organizationID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requestWindows()[organizationID] = &requestWindow{start: time.Now(), used: RequestsPerHour - n}
}

// requestWindows is the map of windows, made on first use; s.mu is held.
func (s *Server) requestWindows() map[string]*requestWindow {
	if s.windows == nil {
		s.windows = map[string]*requestWindow{}
	}
	return s.windows
}

// rateHeaders counts one request of the workspace and sets the
// X-RateLimit-Requests-* headers on its answer.
func (s *Server) rateHeaders(h http.Header, org string) {
	now := time.Now()
	s.mu.Lock()
	w := s.requestWindows()[org]
	if w == nil || now.Sub(w.start) >= time.Hour {
		w = &requestWindow{start: now}
		s.windows[org] = w
	}
	w.used++
	remaining, reset := max(RequestsPerHour-w.used, 0), w.start.Add(time.Hour)
	s.mu.Unlock()
	h.Set("X-RateLimit-Requests-Limit", strconv.Itoa(RequestsPerHour))
	h.Set("X-RateLimit-Requests-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Requests-Reset", strconv.FormatInt(reset.UnixMilli(), 10))
}
