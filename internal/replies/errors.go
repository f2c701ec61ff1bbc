package replies

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
)

// invalid and notFound are failures in the vocabulary the REST API and the
// MCP server share.
func invalid(format string, args ...any) *httpapi.Error { return httpapi.Invalid(format, args...) }

func notFound(format string, args ...any) *httpapi.Error {
	return &httpapi.Error{Code: httpapi.CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// classify turns any failure into an *httpapi.Error and says whether trying again
// may help. It is the one place the platforms' and the store's errors are
// read.
func classify(err error) (e *httpapi.Error, retry bool) {
	if errors.As(err, &e) {
		return e, false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "the request was cancelled or timed out", Err: err}, false
	}
	var de *discord.Error
	if errors.As(err, &de) {
		switch de.Kind {
		case discord.KindRateLimited:
			return &httpapi.Error{Code: httpapi.CodeRateLimit, Message: "Discord is rate limiting weft; try again later", RetryAfter: de.RetryAfter, Err: err}, false
		case discord.KindAuth:
			return &httpapi.Error{Code: httpapi.CodeAuthentication, Message: "Discord rejected weft's bot token", Err: err}, false
		case discord.KindForbidden:
			return &httpapi.Error{Code: httpapi.CodeAuthorization, Message: "weft may not read this Discord thread", Err: err}, false
		case discord.KindNotFound:
			return &httpapi.Error{Code: httpapi.CodeNotFound, Message: "no such Discord thread", Err: err}, false
		case discord.KindInvalid:
			return &httpapi.Error{Code: httpapi.CodeInvalidArgument, Message: "Discord rejected the request", Err: err}, false
		}
		// KindServer: Discord failed; another try may not.
		return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "Discord failed; try again later", Err: err}, true
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
