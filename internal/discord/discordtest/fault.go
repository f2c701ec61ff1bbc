package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Fault is an answer injected in place of a route's normal one.
type Fault struct {
	Status int
	Header http.Header
	Body   string
}

// RateLimit is a per-route 429 as Discord sends it: JSON body with
// retry_after, the bucket headers with Remaining 0 and Reset-After, and
// scope "user".
func RateLimit(retryAfter time.Duration) Fault {
	secs := seconds(retryAfter)
	return Fault{
		Status: http.StatusTooManyRequests,
		Header: http.Header{
			"Retry-After":             {strconv.Itoa(int(retryAfter.Seconds() + 0.999))},
			"X-Ratelimit-Limit":       {"5"},
			"X-Ratelimit-Remaining":   {"0"},
			"X-Ratelimit-Reset":       {fmt.Sprintf("%.3f", float64(time.Now().Add(retryAfter).UnixMilli())/1000)},
			"X-Ratelimit-Reset-After": {secs},
			"X-Ratelimit-Bucket":      {"abcd1234"},
			"X-Ratelimit-Scope":       {"user"},
		},
		Body: rateLimitBody(retryAfter, false),
	}
}

// GlobalRateLimit is a global 429 shaped like Discord's documented example:
// X-RateLimit-Global and Retry-After, but no reset headers, which is the
// case discordgo does not lock other buckets for (discord.md §1.8).
func GlobalRateLimit(retryAfter time.Duration) Fault {
	return Fault{
		Status: http.StatusTooManyRequests,
		Header: http.Header{
			"Retry-After":        {strconv.Itoa(int(retryAfter.Seconds() + 0.999))},
			"X-Ratelimit-Global": {"true"},
			"X-Ratelimit-Scope":  {"global"},
		},
		Body: rateLimitBody(retryAfter, true),
	}
}

// CloudflareBan is a 429 from Cloudflare in front of the API: an HTML page
// with only Retry-After, which discordgo surfaces as a bare JSON syntax error.
func CloudflareBan(retryAfter time.Duration) Fault {
	return Fault{
		Status: http.StatusTooManyRequests,
		Header: http.Header{
			"Content-Type": {"text/html; charset=UTF-8"},
			"Retry-After":  {strconv.Itoa(int(retryAfter.Seconds() + 0.999))},
		},
		Body: "<!DOCTYPE html><html><head><title>Access denied | discord.com used Cloudflare to restrict access</title></head>" +
			"<body><h1>Error 1015</h1><p>You are being rate limited</p></body></html>",
	}
}

// ServerError is a 5xx with Discord's JSON error body.
func ServerError(status int) Fault {
	body, _ := json.Marshal(map[string]any{"code": 0, "message": http.StatusText(status)})
	return Fault{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: string(body)}
}

// rateLimitBody is the JSON of a 429.
func rateLimitBody(retryAfter time.Duration, global bool) string {
	body, _ := json.Marshal(map[string]any{
		"message": "You are being rate limited.", "retry_after": retryAfter.Seconds(), "global": global,
	})
	return string(body)
}

// seconds formats d as Discord's decimal seconds.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// faultRule is an injected fault waiting for its requests.
type faultRule struct {
	method, path string
	remaining    int
	fault        Fault
}

// InjectFault answers the next times requests to method and path (relative
// to the API root, e.g. "/channels/123/messages") with f instead of
// handling them. Faults for the same route apply in injection order.
func (s *Server) InjectFault(method, path string, times int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{method: method, path: path, remaining: times, fault: f})
}

// takeFault consumes the first pending fault for a request, if any.
func (s *Server) takeFault(method, path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.faults {
		if r.method != method || r.path != path {
			continue
		}
		r.remaining--
		if r.remaining <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
		return r.fault, true
	}
	return Fault{}, false
}

// write answers with the fault.
func (f Fault) write(w http.ResponseWriter) {
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(f.Body))
}
