// Package httpapi holds what every weft HTTP handler shares: JSON encoding
// and decoding, error writing (domain error → status and code, in one
// table), and middleware (request id, request log, panic recovery).
package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/weft-dev/weft/internal/thread"
)

// Encode writes v as JSON with status.
func Encode[T any](w http.ResponseWriter, status int, v T) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is sent; an encoding error can only be a broken connection.
	_ = json.NewEncoder(w).Encode(v)
}

// MaxBodyBytes bounds a JSON request body.
const MaxBodyBytes = 1 << 20

// Decode reads a JSON body of at most MaxBodyBytes into a T, rejecting
// unknown fields so a misspelt field fails loudly, and anything after the
// value. An empty body fails with an error that wraps io.EOF.
func Decode[T any](w http.ResponseWriter, r *http.Request) (T, error) {
	var v T
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("%w: decode body: %w", thread.ErrInvalid, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, fmt.Errorf("%w: decode body: data after the JSON value", thread.ErrInvalid)
	}
	return v, nil
}

// ErrorBody is every error response's shape.
type ErrorBody struct {
	Error     string `json:"error"`
	Code      string `json:"code"`
	RequestID string `json:"request_id,omitempty"`
}

// errorStatuses maps domain error kinds to HTTP, in the order they are tried.
var errorStatuses = []struct {
	kind   error
	status int
	code   string
}{
	{thread.ErrNotFound, http.StatusNotFound, "not_found"},
	{thread.ErrInvalid, http.StatusBadRequest, "invalid"},
	{thread.ErrDuplicate, http.StatusConflict, "duplicate"},
	{thread.ErrConflict, http.StatusConflict, "conflict"},
	{thread.ErrAborted, http.StatusConflict, "aborted"},
}

// WriteError answers with the status and code of err's kind. Errors of no
// known kind are logged and hidden: the client sees "internal error" and the
// request id, never the error's text.
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	id := RequestID(r.Context())
	for _, e := range errorStatuses {
		if errors.Is(err, e.kind) {
			Encode(w, e.status, ErrorBody{Error: err.Error(), Code: e.code, RequestID: id})
			return
		}
	}
	logger.ErrorContext(r.Context(), "request failed", slog.String("request_id", id), slog.Any("error", err))
	Encode(w, http.StatusInternalServerError, ErrorBody{Error: "internal error", Code: "internal", RequestID: id})
}
