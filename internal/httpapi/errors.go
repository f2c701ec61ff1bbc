package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// Code is a failure's kind as a client sees it, the same in every REST
// answer and every MCP tool error. The origin design's codes for
// get-thread-replies (NotFound, AuthenticationError, AuthorizationError,
// RateLimit) keep their names; the others follow their style. Each code has
// one HTTP status.
type Code string

// Codes, with their statuses.
const (
	CodeInvalidArgument      Code = "InvalidArgument"      // 400: a parameter, body or cursor refused
	CodeUnauthorized         Code = "Unauthorized"         // 401: no or a wrong bearer token
	CodeAuthorization        Code = "AuthorizationError"   // 403: weft may not read it
	CodeNotFound             Code = "NotFound"             // 404: no such thread or route
	CodeMethodNotAllowed     Code = "MethodNotAllowed"     // 405
	CodeConflict             Code = "Conflict"             // 409: the state forbids it
	CodeUnsupportedMediaType Code = "UnsupportedMediaType" // 415: a body that is not application/json
	CodeRateLimit            Code = "RateLimit"            // 429: a platform rate limits weft
	CodeInternal             Code = "Internal"             // 500: a bug or an unexpected failure
	// CodeAuthentication is a platform refusing weft's own credentials: a
	// 502, as the caller's token was fine and a 401 would say otherwise.
	CodeAuthentication Code = "AuthenticationError"
	CodeUnavailable    Code = "Unavailable" // 503: off, or a dependency is down; try again later
)

// statuses is each code's HTTP status.
var statuses = map[Code]int{
	CodeInvalidArgument:      http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeAuthorization:        http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	CodeConflict:             http.StatusConflict,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeRateLimit:            http.StatusTooManyRequests,
	CodeInternal:             http.StatusInternalServerError,
	CodeAuthentication:       http.StatusBadGateway,
	CodeUnavailable:          http.StatusServiceUnavailable,
}

// Codes lists every code, sorted.
func Codes() []Code { return slices.Sorted(maps.Keys(statuses)) }

// Status is c's HTTP status.
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a failure as a client sees it. Message is safe to show; Err, the
// cause, is for logs only.
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
		e.Code == CodeInvalidArgument && target == thread.ErrInvalid
}

// Invalid is an InvalidArgument with a message for the client.
func Invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// kinds maps the domain's error kinds to codes, in the order they are
// tried, with the message shown when the error carries none of its own.
var kinds = []struct {
	kind    error
	code    Code
	message string
}{
	{thread.ErrNotFound, CodeNotFound, "not found"},
	{thread.ErrInvalid, CodeInvalidArgument, "invalid request"},
	{thread.ErrDuplicate, CodeConflict, "it exists already"},
	{thread.ErrConflict, CodeConflict, "the thread's state does not allow it"},
	{thread.ErrAborted, CodeConflict, "the thread was aborted"},
}

// ErrorOf is err as a client may see it: the one mapping from failures to
// codes, for the REST API and the MCP server alike. An *Error is itself; a
// domain kind keeps its meaning, with the domain's own message when it has
// one (a *thread.Error) and a fixed one otherwise, as wrapped errors carry
// the store's internals; anything else is Internal, its text never shown.
func ErrorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, k := range kinds {
		if !errors.Is(err, k.kind) {
			continue
		}
		msg := k.message
		var de *thread.Error
		var te *thread.TransitionError
		switch {
		case errors.As(err, &de):
			msg = de.Msg
		case errors.As(err, &te):
			msg = te.Error()
		}
		return &Error{Code: k.code, Message: msg, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeUnavailable, Message: "the request timed out; try again later", Err: err}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// ErrorBody is every error response's shape.
type ErrorBody struct {
	Error     string `json:"error"`
	Code      Code   `json:"code"`
	RequestID string `json:"request_id,omitempty"`
}

// WriteError answers with ErrorOf(err): its code's status, the code and the
// safe message, and Retry-After for a RateLimit that knows when. An
// Internal error is logged with the request id the client sees.
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := ErrorOf(err)
	id := RequestID(r.Context())
	if e.Code == CodeInternal {
		logger.ErrorContext(r.Context(), "request failed", slog.String("request_id", id), slog.Any("error", err))
	}
	if e.Code == CodeRateLimit && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	Encode(w, e.Code.Status(), ErrorBody{Error: e.Message, Code: e.Code, RequestID: id})
}
