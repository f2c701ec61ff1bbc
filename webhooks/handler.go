// Package webhooks is weft's inbound HTTP from the platforms: it mounts
// each platform's doors (its webhooks, interactions, slash commands and
// OAuth installs, each written in internal/surface/<name>) with the
// middleware they share: counting, tracing, body buffering and admission.
// It names no platform.
package webhooks

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

// Deps is what the doors need.
type Deps struct {
	Logger *slog.Logger
	// Recorder records what the doors receive: the ingester.
	Recorder surface.Recorder
	// Platforms are mounted in order; those that are not surface.Routed
	// have no HTTP doors.
	Platforms []surface.Platform
	// Metrics counts deliveries by outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// Tracer starts each delivery's trace; nil traces nothing.
	Tracer trace.TracerProvider
	// Intake bounds the deliveries worked at once on the routes a
	// platform admits, the rest refused with a 503; nil takes one of
	// webhook.DefaultIntakeLimit slots.
	Intake *admission.Intake
}

// NewHandler returns every platform's webhook and install routes, to be
// mounted on the server's router next to the API.
func NewHandler(d Deps) http.Handler {
	r := chi.NewRouter()
	m := webhook.NewMount(webhook.MountDeps{Recorder: d.Recorder, Logger: d.Logger, Metrics: d.Metrics, Tracer: d.Tracer, Intake: d.Intake})
	for _, p := range d.Platforms {
		if rt, ok := p.(surface.Routed); ok {
			rt.Routes(r, m)
		}
	}
	return r
}
