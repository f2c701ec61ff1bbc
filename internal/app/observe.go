package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// observer serves /metrics, /healthz and /readyz on WEFT_METRICS_ADDR, for
// every role: a worker has no other HTTP, and a scraper or a kubelet inside
// the cluster needs no API token. ready is set once the processor runs and
// cleared when the replica starts draining, so that a rollout waits for a
// new pod and sends nothing to a pod on its way out.
type observer struct {
	ready atomic.Bool
}

// readyTimeout bounds /readyz's database ping, so that a hung database
// fails the probe rather than hanging it.
const readyTimeout = 2 * time.Second

// serveMetrics starts the observer's listener and returns the address it
// listens on ("" when WEFT_METRICS_ADDR is unset) and how to stop it.
func (a *App) serveMetrics(ctx context.Context) (addr string, stop func(), err error) {
	if a.cfg.MetricsAddr == "" {
		return "", func() {}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.telemetry.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !a.observer.ready.Load() {
			writeStatus(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "processor": "not running"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := a.intakePool.Ping(ctx); err != nil {
			a.logger.WarnContext(ctx, "not ready", slog.Any("error", err))
			writeStatus(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
			return
		}
		writeStatus(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	})
	ln, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.logger.InfoContext(ctx, "weft serving metrics and probes", slog.String("addr", ln.Addr().String()), slog.String("role", a.cfg.Role))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.WarnContext(ctx, "metrics server", slog.Any("error", err))
		}
	}()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func writeStatus(w http.ResponseWriter, code int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
