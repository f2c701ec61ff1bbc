package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	goslack "github.com/slack-go/slack"

	"github.com/weft-dev/weft/internal/surface"
)

// platform names Slack in errors.
const platform = "slack"

// minRetryAfter is the wait assumed for a 429 without a Retry-After header,
// Slack's documented minimum unit.
const minRetryAfter = time.Second

// errorKinds maps Slack's error strings to kinds; anything else is
// surface.KindInvalid. Sources: the method pages' error tables (slack.md §9).
var errorKinds = map[string]surface.Kind{
	"ratelimited":  surface.KindRateLimited,
	"rate_limited": surface.KindRateLimited,

	"not_authed":                               surface.KindAuth,
	"invalid_auth":                             surface.KindAuth,
	"account_inactive":                         surface.KindAuth,
	"token_revoked":                            surface.KindAuth,
	"token_expired":                            surface.KindAuth,
	"no_permission":                            surface.KindForbidden,
	"missing_scope":                            surface.KindForbidden,
	"not_in_channel":                           surface.KindForbidden,
	"is_archived":                              surface.KindForbidden,
	"access_denied":                            surface.KindForbidden,
	"ekm_access_denied":                        surface.KindForbidden,
	"restricted_action":                        surface.KindForbidden,
	"team_access_not_granted":                  surface.KindForbidden,
	"restricted_action_read_only_channel":      surface.KindForbidden,
	"restricted_action_thread_only_channel":    surface.KindForbidden,
	"restricted_action_non_threadable_channel": surface.KindForbidden,

	"channel_not_found": surface.KindNotFound,
	"thread_not_found":  surface.KindNotFound,
	"message_not_found": surface.KindNotFound,
	"user_not_found":    surface.KindNotFound,

	"internal_error":      surface.KindServer,
	"fatal_error":         surface.KindServer,
	"service_unavailable": surface.KindServer,
	"request_timeout":     surface.KindServer,
}

// translate is the one place a slack-go or transport failure becomes an
// *surface.Error. Context errors and failures without an HTTP answer (the network)
// stay untyped, only wrapped, so errors.Is(err, context.Canceled) works and
// callers treat them as transient.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("slack: %s: %w", op, err)
	}
	var own *surface.Error
	if errors.As(err, &own) {
		return err
	}
	var rl *goslack.RateLimitedError
	if errors.As(err, &rl) {
		return &surface.Error{Platform: platform, Kind: surface.KindRateLimited, Op: op, Status: http.StatusTooManyRequests, RetryAfter: max(rl.RetryAfter, minRetryAfter), Err: err}
	}
	var sc goslack.StatusCodeError
	if errors.As(err, &sc) {
		e := &surface.Error{Platform: platform, Kind: surface.KindOfStatus(sc.Code), Op: op, Status: sc.Code, Err: err}
		if e.Kind == surface.KindRateLimited {
			e.RetryAfter = minRetryAfter
		}
		return e
	}
	var se goslack.SlackErrorResponse
	if errors.As(err, &se) {
		e := &surface.Error{Platform: platform, Op: op, Status: http.StatusOK, Code: se.Err, Err: err}
		if se.Needed != "" {
			e.Detail = "needs " + se.Needed
		}
		if k, ok := errorKinds[se.Err]; ok {
			e.Kind = k
		} else {
			e.Kind = surface.KindInvalid
		}
		if e.Kind == surface.KindRateLimited {
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
	var e *surface.Error
	if errors.As(err, &e) {
		return e.Kind == surface.KindServer
	}
	return true
}
