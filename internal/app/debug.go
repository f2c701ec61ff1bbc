package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves Go's pprof profiles on WEFT_DEBUG_ADDR until stop is
// called, and returns the address it listens on ("" when it is unset).
// They are on a listener of their own so that an operator can bind it to
// localhost while weft's doors face the internet: a profile shows memory.
func (a *App) serveDebug(ctx context.Context) (addr string, stop func(), err error) {
	if a.cfg.DebugAddr == "" {
		return "", func() {}, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", a.cfg.DebugAddr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.logger.InfoContext(ctx, "weft serving pprof", slog.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.WarnContext(ctx, "debug server", slog.Any("error", err))
		}
	}()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}
