package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	gh "github.com/google/go-github/v93/github"

	"github.com/weft-dev/weft/internal/surface"
)

// platform names GitHub in errors.
const platform = "github"

const (
	// secondaryWait is the wait for a secondary rate limit that names
	// none: GitHub says to wait at least a minute.
	secondaryWait = time.Minute
	// minRetryAfter is the least wait a rate limit is given, for a reset
	// time already past by the client's clock.
	minRetryAfter = time.Second
)

// translate is the one place a go-github or transport failure becomes a
// *surface.Error. A call the caller's context ended stays untyped, only
// wrapped, so errors.Is(err, context.Canceled) works.
func translate(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var own *surface.Error
	if errors.As(err, &own) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("github: %s: %w", op, err)
		}
		return fmt.Errorf("github: %s: %w: %w", op, ctxErr, err)
	}
	e := &surface.Error{Platform: platform, Op: op, Err: err}
	var (
		primary   *gh.RateLimitError
		secondary *gh.AbuseRateLimitError
		resp      *gh.ErrorResponse
		tok       *tokenError
	)
	switch {
	case errors.As(err, &primary):
		e.Kind, e.Detail = surface.KindRateLimited, "primary"
		e.Status = statusOf(primary.Response)
		e.RetryAfter = max(time.Until(primary.Rate.Reset.Time), minRetryAfter)
	case errors.As(err, &secondary):
		e.Kind, e.Detail = surface.KindRateLimited, "secondary"
		e.Status = statusOf(secondary.Response)
		e.RetryAfter = secondaryWait
		if secondary.RetryAfter != nil {
			e.RetryAfter = max(*secondary.RetryAfter, minRetryAfter)
		}
	case errors.As(err, &resp):
		e.Status = statusOf(resp.Response)
		e.Code = resp.Message
		e.Kind = kindOfStatus(e.Status)
		// A 403 or 429 with Retry-After is a secondary limit whatever its
		// documentation_url says (GitHub's rate-limit page: "If the
		// retry-after response header is present...").
		if ra := retryAfter(resp.Response); ra > 0 && (e.Status == http.StatusForbidden || e.Status == http.StatusTooManyRequests) {
			e.Kind, e.Detail, e.RetryAfter = surface.KindRateLimited, "secondary", ra
		} else if e.Kind == surface.KindRateLimited {
			e.RetryAfter = secondaryWait
		}
	case errors.As(err, &tok):
		e.Kind = surface.KindAuth
	default:
		// Refused, reset or timed-out connections, undecodable answers.
		e.Kind = surface.KindServer
	}
	return e
}

// kindOfStatus is surface.KindOfStatus with GitHub's own meanings: 410 is
// an issue deleted or a feature turned off, 409 a conflicting write.
func kindOfStatus(status int) surface.Kind {
	switch status {
	case http.StatusGone:
		return surface.KindNotFound
	case http.StatusConflict:
		return surface.KindConflict
	}
	return surface.KindOfStatus(status)
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// retryAfter is a response's Retry-After in whole seconds, 0 if none.
func retryAfter(r *http.Response) time.Duration {
	if r == nil {
		return 0
	}
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < 0 {
		return 0
	}
	return max(time.Duration(n)*time.Second, minRetryAfter)
}
