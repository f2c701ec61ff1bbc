package discord

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
)

// Rate-limit policy of the transport.
const (
	// maxRateLimitRetries bounds how often one call waits out a 429; discordgo
	// itself retries without a cap.
	maxRateLimitRetries = 3
	// maxRateLimitWait is the longest single wait; a longer one (a Cloudflare
	// ban, a long global limit) fails fast with KindRateLimited so the caller,
	// typically a job, retries later instead of holding a worker.
	maxRateLimitWait = 30 * time.Second
	// unknownRetryAfter is assumed for a 429 that says nothing about when to
	// retry, such as a Cloudflare HTML page without Retry-After; those bans
	// last minutes, so this fails fast too.
	unknownRetryAfter = time.Minute
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 64 << 10
)

// rateLimitHeaders are removed from every answer before discordgo sees it.
var rateLimitHeaders = []string{
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-RateLimit-Reset-After", "X-RateLimit-Bucket", "X-RateLimit-Global", "X-RateLimit-Scope",
}

// limitTransport owns all of weft's Discord rate limiting, in one place that
// sees every request and its context (discord.md §1.8):
//   - at most 50 requests per second overall (windowLimiter);
//   - a global 429 blocks every route until it passes, also when it carries
//     only Retry-After and no reset headers, which discordgo ignores;
//   - a route whose bucket is exhausted (X-RateLimit-Remaining: 0) waits for
//     X-RateLimit-Reset-After before its next request, avoiding 429s that
//     count toward Cloudflare's invalid-request ban;
//   - a 429 is waited out and retried (retry.Do) at most
//     maxRateLimitRetries times, a non-JSON 429 (Cloudflare HTML) is treated
//     as global, and what cannot be waited out becomes a *rateLimitedError;
//   - a 5xx becomes a *serverError, replacing discordgo's immediate 502
//     retries whose final error is an untyped string.
//
// Every wait honours the request's context, which discordgo's time.Sleep
// calls do not. So discordgo's own limiter never sleeps, the rate-limit
// headers are stripped from answers before it sees them: without them its
// buckets never look exhausted. discordgo still holds its per-path bucket
// mutex while we wait, so concurrent calls to one path queue behind the
// waiting one, as they would have to anyway.
type limitTransport struct {
	next    http.RoundTripper
	limiter *windowLimiter
	logger  *slog.Logger

	mu          sync.Mutex
	globalUntil time.Time
	routeUntil  map[string]time.Time // exhausted routes and when they reset
}

// newLimitTransport wraps next.
func newLimitTransport(next http.RoundTripper, logger *slog.Logger) *limitTransport {
	return &limitTransport{
		next:       next,
		limiter:    newWindowLimiter(globalRequestLimit, globalRequestWindow),
		logger:     logger,
		routeUntil: make(map[string]time.Time),
	}
}

// noRetryKey marks a context whose requests must not wait out a 429.
type noRetryKey struct{}

// withoutRateLimitRetry makes requests under ctx fail on a 429 instead of
// waiting, for optional calls such as typing (discord.md pitfall 13).
func withoutRateLimitRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetryKey{}, true)
}

// RoundTrip implements http.RoundTripper. Only a 429 is retried, after the
// wait it names, and only when the request may wait and its body can be
// sent again.
func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	route := routeKey(req.Method, req.URL.Path)
	noRetry, _ := ctx.Value(noRetryKey{}).(bool)
	rewindable := req.Body == nil || req.GetBody != nil
	attempt := 0
	return retry.Do(ctx, retry.Policy{
		Attempts: maxRateLimitRetries + 1,
		MaxWait:  maxRateLimitWait,
		Retryable: func(err error) bool {
			var limited *rateLimitedError
			return !noRetry && rewindable && errors.As(err, &limited)
		},
	}, func(ctx context.Context) (*http.Response, error) {
		attempt++
		return t.send(ctx, req, route, noRetry, attempt > 1)
	})
}

// send makes one attempt of req, a copy of it with a fresh body when again.
func (t *limitTransport) send(ctx context.Context, req *http.Request, route string, noRetry, again bool) (*http.Response, error) {
	if err := t.waitTurn(ctx, route, noRetry); err != nil {
		return nil, err
	}
	out := req
	if again {
		var err error
		if out, err = rewind(req); err != nil {
			return nil, err
		}
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	t.observe(route, resp.Header)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		limited := t.onTooManyRequests(route, resp)
		t.logger.WarnContext(ctx, "discord rate limited", slog.String("route", route),
			slog.Bool("global", limited.global), slog.Duration("retry_after", limited.retryAfter))
		return nil, limited
	case resp.StatusCode >= http.StatusInternalServerError:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil, &serverError{status: resp.StatusCode, body: string(body)}
	}
	for _, h := range rateLimitHeaders {
		resp.Header.Del(h)
	}
	return resp, nil
}

// waitTurn waits for the global block, the route's reset and a slot. A
// block that cannot be waited out (see worthWaiting), or any block for a
// request that must not wait, fails at once.
func (t *limitTransport) waitTurn(ctx context.Context, route string, noRetry bool) error {
	t.mu.Lock()
	until, global := t.globalUntil, true
	if r := t.routeUntil[route]; r.After(until) {
		until, global = r, false
	}
	t.mu.Unlock()
	if wait := time.Until(until); wait > 0 {
		if noRetry || !worthWaiting(ctx, wait) {
			return &rateLimitedError{retryAfter: wait, global: global}
		}
		if err := retry.Sleep(ctx, time.Until(until)); err != nil {
			return err
		}
	}
	return t.limiter.wait(ctx, priorityOf(ctx))
}

// observe records whether the route's bucket is exhausted.
func (t *limitTransport) observe(route string, h http.Header) {
	remaining := h.Get("X-RateLimit-Remaining")
	if remaining == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if remaining != "0" {
		delete(t.routeUntil, route)
		return
	}
	if after, ok := parseSeconds(h.Get("X-RateLimit-Reset-After")); ok {
		t.setRouteUntilLocked(route, time.Now().Add(after))
	}
}

// onTooManyRequests reads a 429, closes it and records the block it implies.
func (t *limitTransport) onTooManyRequests(route string, resp *http.Response) *rateLimitedError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	headerAfter, hasHeader := parseSeconds(resp.Header.Get("Retry-After"))
	limited := &rateLimitedError{
		global: resp.Header.Get("X-RateLimit-Global") == "true" || resp.Header.Get("X-RateLimit-Scope") == "global",
	}
	var payload struct {
		RetryAfter *float64 `json:"retry_after"`
		Global     bool     `json:"global"`
	}
	switch {
	case json.Unmarshal(body, &payload) == nil && payload.RetryAfter != nil:
		limited.retryAfter = secondsToDuration(*payload.RetryAfter)
		limited.global = limited.global || payload.Global
	case hasHeader:
		limited.retryAfter = headerAfter
	default:
		limited.retryAfter = unknownRetryAfter
	}
	if !json.Valid(body) {
		// Not Discord's API but Cloudflare in front of it, which limits the
		// whole IP: every route must stop.
		limited.global = true
	}
	until := time.Now().Add(limited.retryAfter)
	t.mu.Lock()
	defer t.mu.Unlock()
	if limited.global {
		if until.After(t.globalUntil) {
			t.globalUntil = until
		}
	} else {
		t.setRouteUntilLocked(route, until)
	}
	return limited
}

// setRouteUntilLocked records an exhausted route, dropping stale entries
// now and then so the map does not grow with every channel ever used.
func (t *limitTransport) setRouteUntilLocked(route string, until time.Time) {
	if len(t.routeUntil) >= 1024 {
		now := time.Now()
		for k, v := range t.routeUntil {
			if v.Before(now) {
				delete(t.routeUntil, k)
			}
		}
	}
	t.routeUntil[route] = until
}

// worthWaiting reports whether a wait of d is within the cap and the
// context's deadline.
func worthWaiting(ctx context.Context, d time.Duration) bool {
	if d > maxRateLimitWait {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Now().Add(d).Before(deadline)
}

// rewind returns a copy of req with a fresh body for a retry.
func rewind(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if req.Body == nil || req.GetBody == nil {
		return out, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	out.Body = body
	return out, nil
}

// routeKey approximates Discord's rate-limit bucket for a request: the
// method and path with minor ids collapsed, keeping the major parameter
// (channel, guild, or webhook id and token) that Discord buckets by.
func routeKey(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		major := i > 0 && (segs[i-1] == "channels" || segs[i-1] == "guilds" || segs[i-1] == "webhooks")
		webhookToken := i > 1 && segs[i-2] == "webhooks"
		if !major && !webhookToken && thread.IsSnowflake(s) {
			segs[i] = ":id"
		}
	}
	return method + " /" + strings.Join(segs, "/")
}

// parseSeconds parses a decimal number of seconds as Discord sends them.
func parseSeconds(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return secondsToDuration(f), true
}

// secondsToDuration converts float seconds, rounding up to the millisecond
// so a wait never ends before Discord's reset.
func secondsToDuration(s float64) time.Duration {
	return time.Duration(s*1000+0.999) * time.Millisecond
}
