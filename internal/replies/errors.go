package replies

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// invalid and notFound are failures in the vocabulary the REST API and the
// MCP server share.
func invalid(format string, args ...any) *httpapi.Error { return httpapi.Invalid(format, args...) }

func notFound(format string, args ...any) *httpapi.Error {
	return &httpapi.Error{Code: httpapi.CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// classify turns any failure into an *httpapi.Error and says whether trying
// again may help. It is the one place the store's errors are read; a
// platform reader's come as *httpapi.Error values already.
func classify(err error) (e *httpapi.Error, retry bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "the request was cancelled or timed out", Err: err}, false
	}
	if errors.As(err, &e) {
		// A platform that failed may not on another try.
		return e, e.Code == httpapi.CodeUnavailable
	}
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return &httpapi.Error{Code: httpapi.CodeNotFound, Message: "no such thread", Err: err}, false
	case errors.Is(err, thread.ErrInvalid):
		return &httpapi.Error{Code: httpapi.CodeInvalidArgument, Message: "invalid request", Err: err}, false
	}
	// Anything else is the network or the database connection: transient.
	return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "the thread could not be read; try again later", Err: err}, true
}

// PlatformFailure is a platform reader's failure (a *surface.Error) as
// get-thread-replies answers it, every platform alike: platform names it in
// the messages ("Discord"); refused and missing name the conversation weft
// may not read, or that does not exist ("Discord thread"). Any other error (a cancelled context, a broken
// connection) is left as it is, for classify.
func PlatformFailure(err error, platform, refused, missing string) error {
	var pe *surface.Error
	if !errors.As(err, &pe) {
		return err
	}
	e := &httpapi.Error{Err: err}
	switch pe.Kind {
	case surface.KindRateLimited:
		e.Code, e.Message, e.RetryAfter = httpapi.CodeRateLimit, platform+" is rate limiting weft; try again later", pe.RetryAfter
	case surface.KindAuth:
		e.Code, e.Message = httpapi.CodeAuthentication, platform+" rejected weft's bot token"
	case surface.KindForbidden:
		e.Code, e.Message = httpapi.CodeAuthorization, "weft may not read this "+refused
	case surface.KindNotFound:
		e.Code, e.Message = httpapi.CodeNotFound, "no such "+missing
	case surface.KindInvalid:
		e.Code, e.Message = httpapi.CodeInvalidArgument, platform+" rejected the request"
	default:
		// KindServer: the platform failed (its client already retried);
		// another try may not.
		e.Code, e.Message = httpapi.CodeUnavailable, platform+" failed; try again later"
	}
	return e
}
