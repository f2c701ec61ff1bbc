package surface

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// Kind classifies a failed call to a platform by what the caller should do
// next. Each client maps its platform's answers to it; callers switch on it
// without knowing which platform failed.
type Kind int

// Kinds of platform failures.
const (
	// KindServer: the platform failed (5xx, a timeout, a broken
	// connection); retry with backoff. A write may have been applied.
	KindServer Kind = iota + 1
	// KindRateLimited: wait RetryAfter, then retry.
	KindRateLimited
	// KindAuth: the token is missing, invalid, revoked or expired;
	// retrying will not help.
	KindAuth
	// KindForbidden: the token works but may not do this (a missing
	// permission or scope, no access to the channel).
	KindForbidden
	// KindNotFound: no such entity, or it is not visible to weft.
	KindNotFound
	// KindConflict: the entity already exists, e.g. an id sent before.
	KindConflict
	// KindInvalid: the platform (or the client, before sending) refused
	// the request as made; do not retry as is.
	KindInvalid
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindServer:
		return "server"
	case KindRateLimited:
		return "rate_limited"
	case KindAuth:
		return "auth"
	case KindForbidden:
		return "forbidden"
	case KindNotFound:
		return "not_found"
	case KindConflict:
		return "conflict"
	case KindInvalid:
		return "invalid"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Retryable reports whether the same call may succeed later.
func (k Kind) Retryable() bool { return k == KindServer || k == KindRateLimited }

// Error is a failed call to a platform's API, whichever the platform.
// Callers use errors.As to read Kind and RetryAfter; errors.Is still
// reaches the client library's error in Err.
type Error struct {
	// Platform names the platform for messages, as thread.Platform does.
	Platform string
	// Op is what weft was doing, e.g. "send" or "chat.postMessage".
	Op   string
	Kind Kind
	// Status is the HTTP status, 0 if none was received.
	Status int
	// Code is the platform's own error code ("channel_not_found",
	// "10003"), empty if it gave none.
	Code string
	// Detail is what else the platform said that a log wants: the scope
	// the platform says is missing, "global" for a rate limit on the
	// whole token.
	Detail string
	// RetryAfter is how long to wait, for KindRateLimited.
	RetryAfter time.Duration
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s: %s", e.Platform, e.Op, e.Kind)
	var facts []string
	if e.Status != 0 {
		facts = append(facts, "status "+strconv.Itoa(e.Status))
	}
	if e.Code != "" {
		facts = append(facts, e.Code)
	}
	if e.Detail != "" {
		facts = append(facts, e.Detail)
	}
	if e.RetryAfter > 0 {
		facts = append(facts, "retry after "+e.RetryAfter.String())
	}
	for i, f := range facts {
		if i == 0 {
			msg += " (" + f
		} else {
			msg += ", " + f
		}
	}
	if len(facts) > 0 {
		msg += ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// RetryHint is the wait the platform asked for (retry.Hinter).
func (e *Error) RetryHint() time.Duration { return e.RetryAfter }

// Retryable reports whether the same call may succeed later.
func (e *Error) Retryable() bool { return e.Kind.Retryable() }

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// SendError wraps the failure to deliver o. Retryable failures stay as
// they are; the rest — an *Error of a kind that is not retryable, or one
// of the platform's permanent errors — are marked thread.ErrInvalid: a bad
// token, a missing permission, an unknown thread or a rejected body does
// not get better by sending the same row again.
func SendError(platform string, o thread.Outbox, err error, permanent ...error) error {
	var e *Error
	invalid := errors.As(err, &e) && !e.Retryable()
	for _, p := range permanent {
		invalid = invalid || errors.Is(err, p)
	}
	if invalid {
		return fmt.Errorf("%s: send %s %s: %w: %w", platform, o.Kind, o.ID, thread.ErrInvalid, err)
	}
	return fmt.Errorf("%s: send %s %s: %w", platform, o.Kind, o.ID, err)
}

// KindOfStatus maps an HTTP error status to a Kind the way most platforms
// mean it; a client whose platform means otherwise (a 403 that is an
// auth failure) decides those statuses before asking.
func KindOfStatus(status int) Kind {
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

// Body checks that o is for platform p and decodes its body: the first
// step of every platform's Send. A row for another platform, or one whose
// body does not decode, wraps thread.ErrInvalid: no retry will send it.
func Body(p thread.Platform, o thread.Outbox) (thread.OutboxBody, error) {
	if o.Platform != p {
		return thread.OutboxBody{}, fmt.Errorf("%s: send %s: %w: platform is %s", p, o.ID, thread.ErrInvalid, o.Platform)
	}
	body, err := o.Content()
	if err != nil {
		return thread.OutboxBody{}, fmt.Errorf("%s: send: %w", p, err)
	}
	return body, nil
}

// Ambiguous reports whether a failed write may nevertheless have been
// applied: no answer was read (an untyped error: a timeout, a reset
// connection, a cancelled request that may already have been on the
// wire, an unreadable body) or the platform failed (KindServer). Before
// writing again, look for the write. Any other Kind means the platform
// refused it.
func Ambiguous(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind == KindServer
	}
	return true
}
