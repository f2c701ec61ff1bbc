package linear

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weft-dev/weft/internal/surface"
)

// platform names Linear in errors.
const platform = "linear"

// tokenError marks a failure of the TokenSource, so that checkResponse can
// tell "we had no token" from a transport failure.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "get token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// exchange records the headers of the last response seen for
// one call: genqlient's *graphql.HTTPError keeps the body but drops the
// headers, and the rate-limit reset lives in the headers.
type exchange struct {
	header http.Header
}

// Linear's extensions.code values this package acts on. Linear documents
// RATELIMITED; the others are what its API and SDK are seen to use.
const (
	codeRateLimited  = "RATELIMITED"
	codeAuth         = "AUTHENTICATION_ERROR"
	codeForbidden    = "FORBIDDEN"
	codeInternal     = "INTERNAL_SERVER_ERROR"
	codeInvalidInput = "INVALID_INPUT"
	codeInputError   = "INPUT_ERROR"
	codeValidation   = "GRAPHQL_VALIDATION_FAILED"
)

const (
	// defaultRateWait is the wait for a rate limit without reset headers.
	defaultRateWait = 5 * time.Second
	// rateLimitJitterNs bounds the jitter added to a rate-limit wait.
	rateLimitJitterNs = int64(250 * time.Millisecond)
)

// checkResponse turns what a genqlient call returned into the package's
// *surface.Error: the one place where Linear's error shapes are interpreted. ctx is
// the caller's context: when it has ended before Linear answered, the
// context's error is returned (wrapped) rather than an *surface.Error, because the
// call failed for a reason of the caller's making.
func checkResponse(ctx context.Context, op string, err error, ex *exchange, now time.Time) error {
	if err == nil {
		return nil
	}
	var (
		tokErr  *tokenError
		httpErr *graphql.HTTPError
		list    gqlerror.List
	)
	answered := errors.As(err, &httpErr) || errors.As(err, &list)
	if ctxErr := ctx.Err(); ctxErr != nil && !answered {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("linear: %s: %w", op, err)
		}
		return fmt.Errorf("linear: %s: %w: %w", op, ctxErr, err)
	}
	e := &surface.Error{Platform: platform, Op: op, Err: err}
	switch {
	case errors.As(err, &tokErr):
		e.Kind = surface.KindAuth
	case errors.As(err, &httpErr):
		e.Status = httpErr.StatusCode
		e.Kind = kindOfErrors(httpErr.Response.Errors)
		if e.Kind == 0 {
			e.Kind = kindOfStatus(httpErr.StatusCode)
		}
	case errors.As(err, &list):
		e.Kind = kindOfErrors(list)
		if e.Kind == 0 {
			// A GraphQL error in a 200 answer without a code we know:
			// Linear understood the request and refused it.
			e.Kind = surface.KindInvalid
		}
	default:
		// Timeouts, refused or reset connections, truncated or
		// undecodable answers: all worth another try.
		e.Kind = surface.KindServer
	}
	if e.Kind == surface.KindRateLimited {
		var h http.Header
		if ex != nil {
			h = ex.header
		}
		e.RetryAfter = rateLimitWait(h, now)
	}
	return e
}

// kindOfErrors classifies GraphQL errors by their extensions, or returns 0
// when none is recognized. When several errors are present the one that
// matters most for retrying wins.
func kindOfErrors(list gqlerror.List) surface.Kind {
	best := surface.Kind(0)
	for _, ge := range list {
		if ge == nil {
			continue
		}
		k := kindOfError(ge)
		if k != 0 && (best == 0 || precedence(k) < precedence(best)) {
			best = k
		}
	}
	return best
}

func precedence(k surface.Kind) int {
	switch k {
	case surface.KindRateLimited:
		return 0
	case surface.KindAuth:
		return 1
	case surface.KindServer:
		return 2
	case surface.KindConflict:
		return 3
	case surface.KindNotFound:
		return 4
	default:
		return 5
	}
}

func kindOfError(ge *gqlerror.Error) surface.Kind {
	code, _ := ge.Extensions["code"].(string)
	typ, _ := ge.Extensions["type"].(string)
	text := strings.ToLower(ge.Message + " " + stringExt(ge, "userPresentableMessage"))
	switch {
	case code == codeRateLimited || strings.EqualFold(typ, "ratelimited"):
		return surface.KindRateLimited
	case code == codeAuth || code == codeForbidden:
		return surface.KindAuth
	case code == codeInternal:
		return surface.KindServer
	case strings.Contains(text, "entity not found"):
		return surface.KindNotFound
	// A client-chosen id that exists already. Linear's wording, seen by
	// third parties (linear.md §3.1): "conflict on insert of AgentActivity",
	// userPresentableMessage "Entity AgentActivity with id … already
	// exists.", code INPUT_ERROR. Matched on the text, as nothing else
	// distinguishes it from other input errors.
	case strings.Contains(text, "conflict on insert") || strings.Contains(text, "already exists"):
		return surface.KindConflict
	case code == codeInputError || code == codeInvalidInput || code == codeValidation:
		return surface.KindInvalid
	}
	if status, ok := ge.Extensions["statusCode"].(float64); ok {
		return kindOfStatus(int(status))
	}
	return 0
}

func stringExt(ge *gqlerror.Error, key string) string {
	s, _ := ge.Extensions[key].(string)
	return s
}

// kindOfStatus is surface.KindOfStatus but for what Linear means by a
// status: a 403 is an auth failure (the app lost access), a 409 a conflict.
func kindOfStatus(status int) surface.Kind {
	switch status {
	case http.StatusForbidden:
		return surface.KindAuth
	case http.StatusConflict:
		return surface.KindConflict
	}
	return surface.KindOfStatus(status)
}

// rateLimitWait reads how long until Linear's exhausted bucket refills. The
// X-RateLimit-*-Reset headers are epoch milliseconds (not seconds, a common
// mistake); of the request and complexity buckets, the one reporting zero
// remaining decides, and with no such hint the later reset does. Jitter
// keeps replicas that were limited together from retrying together.
func rateLimitWait(h http.Header, now time.Time) time.Duration {
	var wait time.Duration
	var exhausted bool
	for _, bucket := range []string{"Requests", "Complexity"} {
		reset, ok := headerInt(h, "X-Ratelimit-"+bucket+"-Reset")
		if !ok {
			continue
		}
		d := time.UnixMilli(reset).Sub(now)
		remaining, hasRemaining := headerInt(h, "X-Ratelimit-"+bucket+"-Remaining")
		isExhausted := hasRemaining && remaining <= 0
		switch {
		case isExhausted && !exhausted:
			exhausted, wait = true, d
		case isExhausted == exhausted && d > wait:
			wait = d
		}
	}
	if wait <= 0 {
		if secs, ok := headerInt(h, "Retry-After"); ok && secs > 0 {
			wait = time.Duration(secs) * time.Second
		}
	}
	if wait <= 0 && !hasResetHeader(h) {
		wait = defaultRateWait
	}
	return max(wait, 0) + time.Duration(rand.Int64N(rateLimitJitterNs)) + time.Millisecond
}

func hasResetHeader(h http.Header) bool {
	return h.Get("X-Ratelimit-Requests-Reset") != "" || h.Get("X-Ratelimit-Complexity-Reset") != ""
}

func headerInt(h http.Header, key string) (int64, bool) {
	v := h.Get(key)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}
