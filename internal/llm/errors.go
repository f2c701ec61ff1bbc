package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrNotConfigured is returned (inside an [*Error] of [KindNotConfigured]) by
// the provider [New] builds from an empty Config.Provider.
var ErrNotConfigured = errors.New("llm: no provider configured")

// ErrorKind classifies a failed call by what the caller can do about it.
type ErrorKind int

// The kinds of [Error]. Rate limits, server errors, timeouts, network errors
// and malformed replies are transient: [IsRetryable] reports true for them.
const (
	// KindUnknown is a failure this package could not classify.
	KindUnknown ErrorKind = iota
	// KindRateLimited is HTTP 429; Error.RetryAfter carries the server's hint.
	KindRateLimited
	// KindServer is HTTP 5xx (and 409, which both SDKs treat as transient).
	KindServer
	// KindTimeout is an attempt that hit Config.Timeout, or HTTP 408.
	KindTimeout
	// KindNetwork is a connection that could not be made or broke before a
	// response arrived.
	KindNetwork
	// KindAuth is HTTP 401 or 403: retrying cannot help.
	KindAuth
	// KindBadRequest is any other 4xx, or a Request this package could not
	// encode: retrying cannot help.
	KindBadRequest
	// KindContextTooLong is a request the model refused as longer than its
	// context window (a 400 saying so, or 413): retrying cannot help.
	KindContextTooLong
	// KindMalformed is a reply that was cut short or did not parse into a
	// complete response. It is never returned as a Response.
	KindMalformed
	// KindNotConfigured comes from the provider of an empty Config.Provider.
	KindNotConfigured
	// KindCanceled is the caller's context ending; Unwrap yields its error.
	KindCanceled
)

// String returns the kind's name, for logs and error messages.
func (k ErrorKind) String() string {
	switch k {
	case KindRateLimited:
		return "rate limited"
	case KindServer:
		return "server error"
	case KindTimeout:
		return "timeout"
	case KindNetwork:
		return "network error"
	case KindAuth:
		return "auth error"
	case KindBadRequest:
		return "bad request"
	case KindContextTooLong:
		return "context too long"
	case KindMalformed:
		return "malformed response"
	case KindNotConfigured:
		return "not configured"
	case KindCanceled:
		return "canceled"
	default:
		return "unknown error"
	}
}

// retryable reports whether a failure of this kind may succeed if repeated.
func (k ErrorKind) retryable() bool {
	switch k {
	case KindRateLimited, KindServer, KindTimeout, KindNetwork, KindMalformed:
		return true
	default:
		return false
	}
}

// Error is every failure a [Provider] returns, usually wrapped with the
// operation ("openai: complete: …"); find it with errors.As.
type Error struct {
	Kind ErrorKind
	// StatusCode is the HTTP status, or 0 when none arrived.
	StatusCode int
	// RetryAfter is the server's retry hint, or 0.
	RetryAfter time.Duration
	// Provider is "openai", "anthropic" or "none".
	Provider string
	Err      error
}

// Error describes the failure; the provider name is left to the wrapping
// message, which already starts with it.
func (e *Error) Error() string {
	msg := e.Kind.String()
	if e.StatusCode != 0 {
		msg += " (status " + strconv.Itoa(e.StatusCode) + ")"
	}
	if e.RetryAfter > 0 {
		msg += " retry after " + e.RetryAfter.String()
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error (the SDK's, a context's, …).
func (e *Error) Unwrap() error { return e.Err }

// RetryHint is the server's retry hint, for weft's retry loop.
func (e *Error) RetryHint() time.Duration { return e.RetryAfter }

// IsRetryable reports whether err is an [*Error] of a transient kind. By the
// time Complete returns one, its own retries are spent; the caller may still
// retry later (a job retry, say), honouring Error.RetryAfter.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind.retryable()
}

// classify builds the *Error for a failed attempt from what both adapters can
// know: the caller's context, the HTTP status and headers when a response
// arrived (status 0 otherwise), and the SDK's error. The adapters' translate
// functions dig the status out of their SDK's error type first.
func classify(ctx context.Context, provider string, status int, header http.Header, err error) *Error {
	e := &Error{Provider: provider, StatusCode: status, Err: err}
	if ctx.Err() != nil {
		// The caller gave up: whatever the attempt failed with is noise.
		e.Kind, e.StatusCode, e.Err = KindCanceled, 0, ctxError(ctx)
		return e
	}
	e.RetryAfter = retryAfter(header)
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
	case status == http.StatusRequestTimeout:
		e.Kind = KindTimeout
	case status == http.StatusConflict || status >= 500:
		e.Kind = KindServer
	case status == http.StatusRequestEntityTooLarge || status >= 400 && status < 500 && tooLong(err):
		e.Kind = KindContextTooLong
	case status >= 400:
		e.Kind = KindBadRequest
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		// Only the per-attempt timeout can expire here, the caller's context
		// being live; it may have struck while the body was being read.
		e.Kind = KindTimeout
	case status >= 200 && status < 300:
		// The status said success but the SDK failed on the body: it was cut
		// off, or did not parse. That is never a completed call.
		e.Kind = KindMalformed
	case isNetError(err):
		e.Kind = KindNetwork
	default:
		e.Kind = KindUnknown
	}
	return e
}

// canceled is the *Error for a caller's context that ended between attempts.
func canceled(ctx context.Context, provider string) *Error {
	return &Error{Kind: KindCanceled, Provider: provider, Err: ctxError(ctx)}
}

// ctxError is ctx's error, joined with its cause when one was given (weft
// cancels with causes such as "stopping"), so errors.Is finds both.
func ctxError(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}

// tooLongPhrases are how the providers word a request over the model's
// context window: OpenAI's error code and message, Anthropic's message, and
// the wordings of common OpenAI-compatible servers (vLLM, Ollama).
var tooLongPhrases = []string{"context_length_exceeded", "maximum context length", "prompt is too long",
	"context window", "too many tokens"}

// tooLong reports whether err, an SDK error whose text carries the
// response body, says the request was over the context window.
func tooLong(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, p := range tooLongPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// retryAfter reads the server's hint, preferring the millisecond header
// (OpenAI and Anthropic both send retry-after-ms) over Retry-After, which may
// be seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}
