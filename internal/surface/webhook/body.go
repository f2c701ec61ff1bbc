// Package webhook holds what every platform's webhook handler does before
// it knows the platform: read the body bounded in size and time, and
// reject a request with one logged reason.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// MaxBody caps a webhook body. The largest platform event weft takes (an
// issue with its comment thread and guidance) is well under this; anything
// larger is not the platform.
const MaxBody = 1 << 20

// bodyReadTimeout bounds reading a webhook's body. Platforms send a few
// kilobytes at once and give up on an answer within seconds, so a
// body still arriving after this is not theirs to wait for.
const bodyReadTimeout = 2 * time.Second

// Reject answers a request weft refuses with status and reason, logging
// err; nothing has been written when it is called.
type Reject func(status int, reason string, err error)

// Rejecter answers a request weft refuses, logging why once under msg.
func Rejecter(ctx context.Context, w http.ResponseWriter, logger *slog.Logger, msg string) Reject {
	return func(status int, reason string, err error) {
		logger.InfoContext(ctx, msg, slog.Int("status", status), slog.String("reason", reason), slog.Any("error", err))
		http.Error(w, reason, status)
	}
}

// ReadBody reads the raw body, at most MaxBody bytes within
// bodyReadTimeout, for the signature to be checked on exactly those bytes.
// It rejects an oversized (413) or unreadable or late (400) body itself and
// reports whether to go on. A body BufferBody read already is returned as
// it is.
func ReadBody(w http.ResponseWriter, r *http.Request, reject Reject) ([]byte, bool) {
	if b, ok := r.Body.(buffered); ok {
		return b.body, true
	}
	rc := http.NewResponseController(w)
	// Setting fails only where there is no connection (a test's recorder).
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		// The deadline stays: net/http would otherwise wait, with none, to
		// drain the rest of a late body after the answer.
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			reject(http.StatusRequestEntityTooLarge, "body too large", err)
			return nil, false
		}
		reject(http.StatusBadRequest, "unreadable body", err)
		return nil, false
	}
	// The deadline was for the body alone: left set, it would cancel the
	// request's context while the handler still works on it. (net/http
	// starts reading ahead at the body's end, so a body that ends within
	// microseconds of the deadline may still see its context cancelled,
	// and gets a 503 that the platform retries.)
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// ReadVerified reads the body (ReadBody) and checks the platform's
// signature on exactly those bytes with verify, answering 401 with reason
// when it fails. It reports whether to go on.
func ReadVerified(w http.ResponseWriter, r *http.Request, reject Reject, reason string, verify func(body []byte) error) ([]byte, bool) {
	body, ok := ReadBody(w, r, reject)
	if !ok {
		return nil, false
	}
	if err := verify(body); err != nil {
		reject(http.StatusUnauthorized, reason, err)
		return nil, false
	}
	return body, true
}

// BufferBody reads the body (ReadBody) before next runs, so that a sender
// trickling its body holds a connection for at most bodyReadTimeout and
// never one of the slots that load shedding counts.
func BufferBody(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, ok := ReadBody(w, r, Rejecter(r.Context(), w, logger, "webhook body rejected"))
			if !ok {
				return
			}
			r.Body = buffered{Reader: bytes.NewReader(body), body: body}
			next.ServeHTTP(w, r)
		})
	}
}

// buffered is a body BufferBody read before the handler ran.
type buffered struct {
	*bytes.Reader
	body []byte
}

// Close implements io.Closer: there is nothing to release.
func (buffered) Close() error { return nil }
