package replies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// Code is an error's kind as clients see it: the origin design's codes,
// plus InvalidArgument and Unavailable.
type Code string

// Error codes.
const (
	CodeNotFound       Code = "NotFound"
	CodeAuthentication Code = "AuthenticationError"
	CodeAuthorization  Code = "AuthorizationError"
	CodeRateLimit      Code = "RateLimit"
	CodeInvalid        Code = "InvalidArgument"
	CodeUnavailable    Code = "Unavailable"
)

// Error is a failed get-thread-replies. Message is safe to show a client;
// Err, the cause, is for logs only.
type Error struct {
	Code       Code
	Message    string
	RetryAfter time.Duration // for RateLimit, when the platform said
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes a NotFound a thread.ErrNotFound and an InvalidArgument a
// thread.ErrInvalid, so code that knows only the domain's kinds still
// classifies them.
func (e *Error) Is(target error) bool {
	return e.Code == CodeNotFound && target == thread.ErrNotFound ||
		e.Code == CodeInvalid && target == thread.ErrInvalid
}

func invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// classify turns any failure into an *Error and says whether trying again
// may help. It is the one place the store's errors are read; a platform
// reader's come as *Error values already.
func classify(err error) (e *Error, retry bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeUnavailable, Message: "the request was cancelled or timed out", Err: err}, false
	}
	if errors.As(err, &e) {
		// A platform that failed may not on another try.
		return e, e.Code == CodeUnavailable
	}
	// A domain error made to be shown (a bad cursor, say) keeps its message.
	var te *thread.Error
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return &Error{Code: CodeNotFound, Message: "no such thread", Err: err}, false
	case errors.As(err, &te) && te.Kind == thread.ErrInvalid:
		return &Error{Code: CodeInvalid, Message: te.Msg, Err: err}, false
	case errors.Is(err, thread.ErrInvalid):
		return &Error{Code: CodeInvalid, Message: "invalid request", Err: err}, false
	}
	// Anything else is the network or the database connection: transient.
	return &Error{Code: CodeUnavailable, Message: "the thread could not be read; try again later", Err: err}, true
}

// ErrorOf is err as an *Error, for the other surfaces that answer with these
// codes (the MCP server's thread tools): a domain kind keeps its meaning,
// anything unknown becomes Unavailable with a message safe to show.
func ErrorOf(err error) *Error {
	e, _ := classify(err)
	return e
}
