// Package httpapi holds what every weft HTTP handler shares: JSON encoding
// and decoding, the error vocabulary and its writing (failure → code and
// status, in one table), and middleware (request id, request log, panic
// recovery, JSON bodies).
package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
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
// value. An empty body fails with an error that wraps io.EOF. Its errors
// are InvalidArgument, worded for the client in JSON's terms.
func Decode[T any](w http.ResponseWriter, r *http.Request) (T, error) {
	var v T
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return v, fmt.Errorf("%w: %w", Invalid("the body is empty"), err)
		}
		return v, &Error{Code: CodeInvalidArgument, Message: decodeMessage(err), Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, Invalid("the body has data after its JSON value")
	}
	return v, nil
}

// decodeMessage says what is wrong with a body without naming Go's types
// or fields, which encoding/json's messages do.
func decodeMessage(err error) string {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		size   *http.MaxBytesError
	)
	switch {
	case errors.As(err, &size):
		return fmt.Sprintf("the body is larger than %d bytes", size.Limit)
	case errors.As(err, &syntax):
		return fmt.Sprintf("the body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON value does"
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("the body must be a JSON %s", jsonKind(typ.Type))
		}
		return fmt.Sprintf("field %q must be a JSON %s", typ.Field, jsonKind(typ.Type))
	}
	// DisallowUnknownFields has no error type of its own.
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + field
	}
	return "the body is not valid JSON"
}

// jsonKind names t as JSON does.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}
