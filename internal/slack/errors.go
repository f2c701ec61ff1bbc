package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	goslack "github.com/slack-go/slack"
)

// Kind classifies a failed Slack call by what the caller should do next.
type Kind int

// Kinds of Slack failures.
const (
	// KindRateLimited: HTTP 429 or ratelimited/rate_limited; wait RetryAfter.
	KindRateLimited Kind = iota + 1
	// KindAuth: the token is missing, invalid, revoked or expired; retrying
	// will not help.
	KindAuth
	// KindForbidden: the token works but may not do this (missing_scope,
	// not_in_channel, an archived channel, a restricted action).
	KindForbidden
	// KindNotFound: no such channel, thread, message or user.
	KindNotFound
	// KindServer: Slack failed (5xx, internal_error, fatal_error,
	// service_unavailable, request_timeout); a write may have been applied.
	KindServer
	// KindInvalid: Slack refused the request as made (msg_too_long,
	// invalid_blocks, no_text, invalid_arguments, …); do not retry as is.
	KindInvalid
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindRateLimited:
		return "rate_limited"
	case KindAuth:
		return "auth"
	case KindForbidden:
		return "forbidden"
	case KindNotFound:
		return "not_found"
	case KindServer:
		return "server"
	case KindInvalid:
		return "invalid"
	default:
		return "unknown"
	}
}

// Error is a failed Slack Web API call. Callers use errors.As to read Kind,
// Code and RetryAfter; errors.Is still reaches slack-go's error.
type Error struct {
	Kind Kind
	// Op is the Web API method, e.g. "chat.postMessage".
	Op string
	// Status is the HTTP status, 200 for an ok:false answer, 0 if none.
	Status int
	// Code is Slack's error string ("channel_not_found"), empty for a bare
	// HTTP failure.
	Code string
	// Needed is the scope Slack says is missing, for missing_scope.
	Needed string
	// RetryAfter is the wait Slack asked for, for KindRateLimited.
	RetryAfter time.Duration
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("slack: %s: %s (status %d", e.Op, e.Kind, e.Status)
	if e.Code != "" {
		msg += ", " + e.Code
	}
	if e.Needed != "" {
		msg += ", needs " + e.Needed
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

// Unwrap returns slack-go's error.
func (e *Error) Unwrap() error { return e.Err }

// RetryHint is the wait Slack asked for (retry.Hinter).
func (e *Error) RetryHint() time.Duration { return e.RetryAfter }

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// minRetryAfter is the wait assumed for a 429 without a Retry-After header,
// Slack's documented minimum unit.
const minRetryAfter = time.Second

// errorKinds maps Slack's error strings to kinds; anything else is
// KindInvalid. Sources: the method pages' error tables (slack.md §9).
var errorKinds = map[string]Kind{
	"ratelimited":  KindRateLimited,
	"rate_limited": KindRateLimited,

	"not_authed":                               KindAuth,
	"invalid_auth":                             KindAuth,
	"account_inactive":                         KindAuth,
	"token_revoked":                            KindAuth,
	"token_expired":                            KindAuth,
	"no_permission":                            KindForbidden,
	"missing_scope":                            KindForbidden,
	"not_in_channel":                           KindForbidden,
	"is_archived":                              KindForbidden,
	"access_denied":                            KindForbidden,
	"ekm_access_denied":                        KindForbidden,
	"restricted_action":                        KindForbidden,
	"team_access_not_granted":                  KindForbidden,
	"restricted_action_read_only_channel":      KindForbidden,
	"restricted_action_thread_only_channel":    KindForbidden,
	"restricted_action_non_threadable_channel": KindForbidden,

	"channel_not_found": KindNotFound,
	"thread_not_found":  KindNotFound,
	"message_not_found": KindNotFound,
	"user_not_found":    KindNotFound,

	"internal_error":      KindServer,
	"fatal_error":         KindServer,
	"service_unavailable": KindServer,
	"request_timeout":     KindServer,
}

// translate is the one place a slack-go or transport failure becomes an
// *Error. Context errors and failures without an HTTP answer (the network)
// stay untyped, only wrapped, so errors.Is(err, context.Canceled) works and
// callers treat them as transient.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("slack: %s: %w", op, err)
	}
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	var rl *goslack.RateLimitedError
	if errors.As(err, &rl) {
		return &Error{Kind: KindRateLimited, Op: op, Status: http.StatusTooManyRequests, RetryAfter: max(rl.RetryAfter, minRetryAfter), Err: err}
	}
	var sc goslack.StatusCodeError
	if errors.As(err, &sc) {
		e := &Error{Op: op, Status: sc.Code, Err: err}
		switch {
		case sc.Code == http.StatusTooManyRequests:
			e.Kind, e.RetryAfter = KindRateLimited, minRetryAfter
		case sc.Code == http.StatusUnauthorized:
			e.Kind = KindAuth
		case sc.Code == http.StatusForbidden:
			e.Kind = KindForbidden
		case sc.Code == http.StatusNotFound:
			e.Kind = KindNotFound
		case sc.Code >= 500:
			e.Kind = KindServer
		default:
			e.Kind = KindInvalid
		}
		return e
	}
	var se goslack.SlackErrorResponse
	if errors.As(err, &se) {
		e := &Error{Op: op, Status: http.StatusOK, Code: se.Err, Needed: se.Needed, Err: err}
		if k, ok := errorKinds[se.Err]; ok {
			e.Kind = k
		} else {
			e.Kind = KindInvalid
		}
		if e.Kind == KindRateLimited {
			e.RetryAfter = minRetryAfter
		}
		return e
	}
	return fmt.Errorf("slack: %s: %w", op, err)
}

// retryable says whether a read may succeed if repeated: a server failure
// or a network one. A rate limit is surfaced at once, for the caller to
// reschedule (get-thread-replies answers RateLimit); auth, permission,
// not-found and invalid requests never get better.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind == KindServer
	}
	return true
}

// Ambiguous reports whether a failed write may nevertheless have been
// applied: a timeout, a dropped or reset connection, a 5xx, or Slack's
// internal_error/fatal_error. Before sending again, look for the write.
// A rate limit, an auth failure or any other ok:false answer means Slack
// refused the request.
func Ambiguous(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind == KindServer
	}
	// Untyped: no answer was read (timeout, reset, a cancelled request
	// that may already have been on the wire, an unreadable body).
	return true
}
