package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/weft-dev/weft/internal/httpapi"
)

// handleHealthz answers while the process serves: liveness only.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Encode(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// readyTimeout bounds the database ping so a hung database fails the probe
// rather than hanging it.
const readyTimeout = 2 * time.Second

// handleReadyz answers 200 when the database answers, 503 otherwise.
func handleReadyz(logger *slog.Logger, db Pinger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			logger.WarnContext(ctx, "not ready", slog.Any("error", err))
			httpapi.Encode(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
			return
		}
		httpapi.Encode(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	})
}
