package webhook

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/metrics"
)

type outcomeKey struct{}

// Count counts each delivery on the route in m by its outcome: the
// one its handler noted (NoteOutcome), or else the one its status says.
// It runs before load shedding, so a 503 no handler noted is a delivery
// shed unread.
//
// It also starts the delivery's trace: the root span of everything the
// delivery causes, its turn and posts included. The platforms send no
// trace context, so none is read from the request.
func Count(m *metrics.Metrics, tracer trace.Tracer, platform string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var noted string
			ctx, span := tracer.Start(r.Context(), "webhook "+platform, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("weft.platform", platform), attribute.String("http.request.method", r.Method)))
			defer span.End()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r.WithContext(context.WithValue(ctx, outcomeKey{}, &noted)))
			span.SetAttributes(attribute.Int("http.response.status_code", ww.Status()))
			if ww.Status() >= 500 {
				span.SetStatus(codes.Error, http.StatusText(ww.Status()))
			}
			outcome := noted
			if outcome == "" {
				switch s := ww.Status(); {
				case s == http.StatusServiceUnavailable:
					outcome = metrics.EventShed
				case s >= 400:
					outcome = metrics.EventRefused
				default:
					outcome = metrics.EventAccepted
				}
			}
			span.SetAttributes(attribute.String("weft.outcome", outcome))
			m.Event(platform, metrics.SourceWebhook, outcome)
		})
	}
}

// NoteOutcome tells Count what became of the request's delivery,
// where its status alone does not say: a duplicate or ignored delivery is
// a 200 too, a failed write a 503 like a shed one.
func NoteOutcome(ctx context.Context, outcome string) {
	if p, ok := ctx.Value(outcomeKey{}).(*string); ok {
		*p = outcome
	}
}
