package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Kind classifies a failed Discord call by what the caller should do next.
type Kind int

// Kinds of Discord failures.
const (
	// KindRateLimited: wait RetryAfter, then retry.
	KindRateLimited Kind = iota + 1
	// KindAuth: the bot token is invalid (401); retrying will not help.
	KindAuth
	// KindNotFound: unknown channel, message or interaction (404).
	KindNotFound
	// KindForbidden: the bot lacks a permission or access (403).
	KindForbidden
	// KindServer: Discord failed (5xx); retry with backoff.
	KindServer
	// KindInvalid: Discord rejected the request (other 4xx, such as 50035
	// invalid form body or 160004 thread already created); do not retry as is.
	KindInvalid
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindRateLimited:
		return "rate_limited"
	case KindAuth:
		return "auth"
	case KindNotFound:
		return "not_found"
	case KindForbidden:
		return "forbidden"
	case KindServer:
		return "server"
	case KindInvalid:
		return "invalid"
	default:
		return "unknown"
	}
}

// Error is a failed Discord REST call. Callers use errors.As to read Kind and
// RetryAfter; errors.Is still reaches the underlying discordgo error.
type Error struct {
	Kind       Kind
	Op         string        // what weft was doing, e.g. "send"
	Status     int           // HTTP status, 0 if none was received
	Code       int           // Discord's JSON error code, 0 if absent
	Global     bool          // for KindRateLimited: the whole token is limited
	RetryAfter time.Duration // for KindRateLimited: how long to wait
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("discord: %s: %s (status %d", e.Op, e.Kind, e.Status)
	if e.Code != 0 {
		msg += fmt.Sprintf(", code %d", e.Code)
	}
	if e.Kind == KindRateLimited {
		msg += fmt.Sprintf(", retry after %s", e.RetryAfter)
	}
	msg += ")"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// translate is the one place a discordgo or transport failure becomes an
// *Error. Context errors and failures without an HTTP answer (the network)
// stay untyped, only wrapped, so errors.Is(err, context.Canceled) works and
// callers treat them as transient.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("discord: %s: %w", op, err)
	}
	var limited *rateLimitedError
	if errors.As(err, &limited) {
		return &Error{Kind: KindRateLimited, Op: op, Status: http.StatusTooManyRequests,
			Global: limited.global, RetryAfter: limited.retryAfter, Err: err}
	}
	var server *serverError
	if errors.As(err, &server) {
		return &Error{Kind: KindServer, Op: op, Status: server.status, Err: err}
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		e := &Error{Kind: KindRateLimited, Op: op, Status: http.StatusTooManyRequests, Err: err}
		if rl.RateLimit != nil && rl.TooManyRequests != nil {
			e.RetryAfter = rl.RetryAfter
		}
		return e
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		e := &Error{Kind: kindForStatus(rest.Response.StatusCode), Op: op, Status: rest.Response.StatusCode, Err: err}
		if rest.Message != nil {
			e.Code = rest.Message.Code
		}
		return e
	}
	return fmt.Errorf("discord: %s: %w", op, err)
}

// kindForStatus maps an HTTP error status to a Kind.
func kindForStatus(status int) Kind {
	switch {
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == http.StatusUnauthorized:
		return KindAuth
	case status == http.StatusForbidden:
		return KindForbidden
	case status == http.StatusNotFound:
		return KindNotFound
	case status >= 500:
		return KindServer
	default:
		return KindInvalid
	}
}

// rateLimitedError is returned by the transport when a 429 could not be
// waited out: retries ran out, the wait exceeds the cap or the deadline.
type rateLimitedError struct {
	retryAfter time.Duration
	global     bool
}

func (e *rateLimitedError) Error() string {
	scope := "route"
	if e.global {
		scope = "global"
	}
	return fmt.Sprintf("%s rate limit, retry after %s", scope, e.retryAfter)
}

// RetryHint is how long Discord asked to wait, for the transport's retries.
func (e *rateLimitedError) RetryHint() time.Duration { return e.retryAfter }

// serverError is returned by the transport for a 5xx answer, so discordgo's
// immediate, untyped 502 retries never run (see transport.go).
type serverError struct {
	status int
	body   string
}

func (e *serverError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, e.body)
}
