package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/thread"
)

// TracingConfig turns tracing on: the standard OpenTelemetry variables.
type TracingConfig struct {
	// Endpoint is OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT; empty leaves tracing off. The OTLP/HTTP
	// exporter reads these and the other OTEL_EXPORTER_OTLP_* variables
	// (headers, timeout) itself.
	Endpoint    string
	ServiceName string
	// exporter, set by tests, takes the spans instead of OTLP, each as
	// it ends.
	exporter sdktrace.SpanExporter
}

func loadTracing(getenv func(string) string) TracingConfig {
	return TracingConfig{
		Endpoint:    cmp.Or(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
		ServiceName: cmp.Or(getenv("OTEL_SERVICE_NAME"), "weft"),
	}
}

// telemetry is what weft exports about itself: the Prometheus registry
// /metrics serves with the series counted into it, and the tracer provider.
type telemetry struct {
	registry *prometheus.Registry
	metrics  *metrics.Metrics
	tracer   trace.TracerProvider
	// shutdown flushes the spans not yet exported.
	shutdown func(context.Context) error
}

// newTelemetry builds the registry (the Go and process collectors, weft's
// series, and the database's gauges read through store at each scrape)
// and, when an OTLP endpoint is configured, the tracer provider.
func newTelemetry(ctx context.Context, cfg *Config, store *db.Store, logger *slog.Logger) (*telemetry, error) {
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	if err := metrics.WatchState(reg, dbState(store), logger.With("component", "metrics")); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	t := &telemetry{registry: reg, metrics: m, tracer: noop.NewTracerProvider(), shutdown: func(context.Context) error { return nil }}
	exp := cfg.Tracing.exporter
	if exp == nil && cfg.Tracing.Endpoint == "" {
		return t, nil
	}
	opt := sdktrace.WithSyncer(exp)
	if exp == nil {
		if exp, err = otlptracehttp.New(ctx); err != nil {
			return nil, fmt.Errorf("otlp trace exporter: %w", err)
		}
		opt = sdktrace.WithBatcher(exp)
		logger.InfoContext(ctx, "tracing on", slog.String("endpoint", cfg.Tracing.Endpoint))
	}
	tp := sdktrace.NewTracerProvider(opt,
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", cfg.Tracing.ServiceName))))
	t.tracer, t.shutdown = tp, tp.Shutdown
	return t, nil
}

// dbState reads the scrape's gauges from store.
func dbState(store *db.Store) metrics.StateFunc {
	return func(ctx context.Context) (*metrics.State, error) {
		g, err := store.Gauges(ctx)
		if err != nil {
			return nil, err
		}
		// A platform with nothing to send shows 0, not no series.
		s := &metrics.State{Backlog: map[string]int64{string(thread.PlatformLinear): 0, string(thread.PlatformDiscord): 0},
			OldestUnsent: map[string]time.Duration{}, StuckThreads: g.StuckThreads}
		for _, b := range g.Backlog {
			s.Backlog[b.Platform], s.OldestUnsent[b.Platform] = b.Count, b.Oldest
		}
		for _, j := range g.Jobs {
			s.Jobs = append(s.Jobs, metrics.JobCount{Queue: j.Queue, State: j.State, Count: j.Count})
		}
		return s, nil
	}
}
