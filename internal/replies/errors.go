package replies

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/internal/httpapi"
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
