package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/webhooks"
)

// mountWebhooks puts the platforms' routes on the API's router.
func mountWebhooks(h http.Handler) func(chi.Router) {
	return func(r chi.Router) {
		r.Handle("/webhooks/*", h)
		r.Handle("/oauth/*", h)
	}
}

// serve runs weft until ctx ends (SIGINT or SIGTERM), then stops in reverse
// order of starting: the HTTP server drains, the processor finishes or
// releases its turns, then the pools close. It has two: the processor's,
// and the intake's for webhooks, the gateway and the API, so that however
// many turns are queued an inbound event finds a connection.
func serve(ctx context.Context, cfg *config, logger *slog.Logger) error {
	store, pool, err := openMigrated(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	intake, intakePool, err := openStore(ctx, cfg.intakeDB(), logger)
	if err != nil {
		return err
	}
	defer intakePool.Close()
	eng, err := newEngine(ctx, cfg, logger, store, intake, cfg.Role != "api")
	if err != nil {
		return err
	}
	if err := eng.proc.Start(ctx); err != nil {
		return err
	}
	if err := eng.discord.start(ctx, intake, eng.ingest); err != nil {
		return err
	}
	if cfg.Role == "worker" {
		logger.Info("weft working jobs (no HTTP)", slog.String("role", cfg.Role))
		<-ctx.Done()
		return eng.stop(ctx, logger, cfg.ShutdownTimeout)
	}

	hooks := webhooks.NewHandler(webhooks.Deps{
		Logger: logger.With("component", "webhooks"), Ingester: eng.ingest,
		LinearWebhookSecret: []byte(cfg.Linear.WebhookSecret), LinearOAuth: eng.linear.oauth,
		Discord: eng.discord.interactions(intake),
		Metrics: eng.telemetry.metrics, Tracer: eng.telemetry.tracer,
	})
	handler := api.NewServer(api.Deps{
		Logger: logger.With("component", "http"), DB: intake, Mount: mountWebhooks(hooks),
		Token: cfg.APIToken, Store: intake, Ingester: eng.ingest, Replies: eng.replies,
		MCP: newMCP(store, eng.replies, logger), Metrics: eng.telemetry.registry, Series: eng.telemetry.metrics,
	})
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute, // keep-alive connections left idle
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	logger.Info("weft serving", slog.String("addr", ln.Addr().String()), slog.String("role", cfg.Role))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = eng.stop(ctx, logger, cfg.ShutdownTimeout)
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}

	logger.Info("shutting down", slog.Duration("timeout", cfg.ShutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	if err := eng.stop(ctx, logger, cfg.ShutdownTimeout); err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}
