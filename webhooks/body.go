package webhooks

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
)

// rejecter answers a request weft refuses, logging why once: nothing has
// been written when it is called.
func rejecter(ctx context.Context, w http.ResponseWriter, logger *slog.Logger, msg string) func(status int, reason string, err error) {
	return func(status int, reason string, err error) {
		logger.InfoContext(ctx, msg, slog.Int("status", status), slog.String("reason", reason), slog.Any("error", err))
		http.Error(w, reason, status)
	}
}

// readBody reads the raw body, at most maxWebhookBody bytes, for the
// signature to be checked on exactly those bytes. It rejects an oversized
// (413) or unreadable (400) body itself and reports whether to go on.
func readBody(w http.ResponseWriter, r *http.Request, reject func(int, string, error)) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			reject(http.StatusRequestEntityTooLarge, "body too large", err)
			return nil, false
		}
		reject(http.StatusBadRequest, "unreadable body", err)
		return nil, false
	}
	return body, true
}
