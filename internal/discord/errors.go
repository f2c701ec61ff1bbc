package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/surface"
)

// translate is the one place a discordgo or transport failure becomes an
// *surface.Error. Context errors and failures without an HTTP answer (the network)
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
		e := &surface.Error{Platform: "discord", Kind: surface.KindRateLimited, Op: op, Status: http.StatusTooManyRequests,
			RetryAfter: limited.retryAfter, Err: err}
		if limited.global {
			e.Detail = "global"
		}
		return e
	}
	var server *serverError
	if errors.As(err, &server) {
		return &surface.Error{Platform: "discord", Kind: surface.KindServer, Op: op, Status: server.status, Err: err}
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		e := &surface.Error{Platform: "discord", Kind: surface.KindRateLimited, Op: op, Status: http.StatusTooManyRequests, Err: err}
		if rl.RateLimit != nil && rl.TooManyRequests != nil {
			e.RetryAfter = rl.RetryAfter
		}
		return e
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		e := &surface.Error{Platform: "discord", Kind: surface.KindOfStatus(rest.Response.StatusCode), Op: op, Status: rest.Response.StatusCode, Err: err}
		if rest.Message != nil && rest.Message.Code != 0 {
			e.Code = strconv.Itoa(rest.Message.Code)
		}
		return e
	}
	return fmt.Errorf("discord: %s: %w", op, err)
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
