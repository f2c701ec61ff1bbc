package discordtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// GlobalRateLimit is a global 429 shaped like Discord's documented example:
// X-RateLimit-Global and Retry-After, but no reset headers, which is the
// case discordgo does not lock other buckets for (discord.md §1.8).
func GlobalRateLimit(retryAfter time.Duration) fakekit.Fault {
	return rawRateLimit(retryAfter, rateLimitBody(retryAfter, true),
		"Content-Type", "application/json", "X-RateLimit-Global", "true", "X-RateLimit-Scope", "global")
}

// CloudflareBan is a 429 from Cloudflare in front of the API: an HTML page
// with only Retry-After, which discordgo surfaces as a bare JSON syntax error.
func CloudflareBan(retryAfter time.Duration) fakekit.Fault {
	return rawRateLimit(retryAfter, "<!DOCTYPE html><html><head><title>Access denied | discord.com used Cloudflare to restrict access</title></head>"+
		"<body><h1>Error 1015</h1><p>You are being rate limited</p></body></html>",
		"Content-Type", "text/html; charset=UTF-8")
}

// rawRateLimit is a 429 sent as it is: body, Retry-After, and the header
// pairs (name, value, ...).
func rawRateLimit(retryAfter time.Duration, body string, header ...string) fakekit.Fault {
	f := fakekit.RateLimited(retryAfter)
	f.Status, f.Body = http.StatusTooManyRequests, body
	f.Header = http.Header{"Retry-After": {f.RetryAfterSeconds()}}
	for i := 0; i+1 < len(header); i += 2 {
		f.Header.Set(header[i], header[i+1])
	}
	return f
}

// writeFault answers with a failing fault as Discord does: a rate limit is
// a per-route 429 (JSON body with retry_after, the bucket headers with
// Remaining 0 and Reset-After, scope "user"), anything else Discord's JSON
// error with the fault's code (a number; 0 when unset).
func writeFault(w http.ResponseWriter, f fakekit.Fault) {
	if f.RetryAfter > 0 {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Retry-After", f.RetryAfterSeconds())
		h.Set("X-Ratelimit-Limit", "5")
		h.Set("X-Ratelimit-Remaining", "0")
		h.Set("X-Ratelimit-Reset", fmt.Sprintf("%.3f", float64(time.Now().Add(f.RetryAfter).UnixMilli())/1000))
		h.Set("X-Ratelimit-Reset-After", fmt.Sprintf("%.3f", f.RetryAfter.Seconds()))
		h.Set("X-Ratelimit-Bucket", "abcd1234")
		h.Set("X-Ratelimit-Scope", "user")
		w.WriteHeader(cmp.Or(f.Status, http.StatusTooManyRequests))
		_, _ = w.Write([]byte(rateLimitBody(f.RetryAfter, false)))
		return
	}
	status := cmp.Or(f.Status, http.StatusInternalServerError)
	code, _ := strconv.Atoi(f.Code)
	writeError(w, status, code, cmp.Or(f.Message, http.StatusText(status)))
}

// rateLimitBody is the JSON of a 429.
func rateLimitBody(retryAfter time.Duration, global bool) string {
	body, _ := json.Marshal(map[string]any{
		"message": "You are being rate limited.", "retry_after": retryAfter.Seconds(), "global": global,
	})
	return string(body)
}
