package webhook

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Intake defaults: more slots than the intake pool's connections, so a
// delivery's reads and its write overlap others', few enough that the
// admitted ones are answered well within a platform's deadline. A delivery
// slower than IntakeSlow presses the intake, and turns yield.
const (
	DefaultIntakeLimit = 64
	IntakeSlow         = 25 * time.Millisecond
)

// MountDeps is what the doors' shared middleware needs.
type MountDeps struct {
	// Recorder records what the doors receive (the ingester).
	Recorder surface.Recorder
	Logger   *slog.Logger
	// Metrics counts deliveries by outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// Tracer starts each delivery's trace; nil traces nothing.
	Tracer trace.TracerProvider
	// Intake bounds the deliveries worked at once on admitted routes, the
	// rest refused with a 503; nil takes one of DefaultIntakeLimit slots.
	Intake *admission.Intake
}

// NewMount is the middleware every platform's doors are mounted with.
func NewMount(d MountDeps) surface.Mount {
	tracer := tracing.Tracer(d.Tracer)
	in := d.Intake
	if in == nil {
		in = admission.NewIntake(DefaultIntakeLimit, IntakeSlow)
	}
	logger := d.Logger.With("component", "webhooks")
	return surface.Mount{
		Recorder: d.Recorder, Logger: logger, Tracer: tracer,
		Count: func(p thread.Platform) func(http.Handler) http.Handler {
			return Count(d.Metrics, tracer, string(p))
		},
		Buffer: BufferBody(logger),
		Admit:  Admit(in),
	}
}

// Admit works a delivery only when in has a slot for it, and refuses it
// at once otherwise: a 503 with Retry-After, which the platform retries,
// rather than a wait that would take its answer past its deadline.
func Admit(in *admission.Intake) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			done, ok := in.Admit()
			if !ok {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "over capacity, retry shortly", http.StatusServiceUnavailable)
				return
			}
			defer done()
			next.ServeHTTP(w, r)
		})
	}
}
