package webhook_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weft-dev/weft/internal/surface/webhook"
)

func TestReadVerified(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	signed := func(body []byte) error {
		if string(body) != "signed" {
			return errors.New("bad signature")
		}
		return nil
	}
	tests := []struct {
		name   string
		body   string
		status int // 0: read and verified, nothing written
	}{
		{"verified", "signed", 0},
		{"bad signature", "forged", http.StatusUnauthorized},
		{"too large", strings.Repeat("x", webhook.MaxBody+1), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/webhooks/x", strings.NewReader(tt.body))
			reject := webhook.Rejecter(r.Context(), w, logger, "rejected")
			body, ok := webhook.ReadVerified(w, r, reject, "invalid signature", signed)
			if ok != (tt.status == 0) {
				t.Fatalf("ok = %v, want %v", ok, tt.status == 0)
			}
			if ok && string(body) != tt.body {
				t.Fatalf("body = %q, want %q", body, tt.body)
			}
			if !ok && w.Code != tt.status {
				t.Fatalf("status = %d, want %d", w.Code, tt.status)
			}
		})
	}
}
