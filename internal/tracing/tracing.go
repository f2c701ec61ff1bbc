// Package tracing carries OpenTelemetry traces where a context cannot go:
// into a River job (its metadata, so a turn continues the trace of the
// webhook that enqueued it, and a delivery the turn's) and onto the
// stitches a trace produced (their metadata's trace_id, so the console
// can link a step to its trace). Spans themselves are started by the
// packages that do the work, on a TracerProvider they are given.
package tracing

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of weft's spans.
const Name = "github.com/weft-dev/weft"

// Tracer is weft's tracer from tp; a nil tp traces nothing.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Name)
}

// Child starts a span under ctx's, or, when ctx has none (work no event
// started: a sweep, a reclaim), a span that records nothing: such work
// would otherwise start a trace of its own at every run.
func Child(ctx context.Context, tracer trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return tracer.Start(ctx, name, opts...)
}

// metaKey is the key of the trace context in a job's metadata.
const metaKey = "otel"

// propagator writes and reads W3C trace context (traceparent).
var propagator = propagation.TraceContext{}

// Metadata is a job's metadata carrying ctx's trace, for an insert whose
// jobs belong to different traces (a batch of sessions): nil when ctx has
// none.
func Metadata(ctx context.Context) []byte {
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]map[string]string{metaKey: carrier})
	return b
}

// Middleware is the River middleware that carries traces through jobs: on
// insert, a job without a trace in its metadata gets the inserting
// context's; when worked, a job with one runs under a span continuing it.
// Jobs no trace enqueued (the leader's periodic sweeps) run untraced.
type Middleware struct {
	river.MiddlewareDefaults
	tracer trace.Tracer
}

var (
	_ rivertype.JobInsertMiddleware = (*Middleware)(nil)
	_ rivertype.WorkerMiddleware    = (*Middleware)(nil)
)

// NewMiddleware returns the middleware, starting its spans on tp.
func NewMiddleware(tp trace.TracerProvider) *Middleware {
	return &Middleware{tracer: Tracer(tp)}
}

// InsertMany implements rivertype.JobInsertMiddleware.
func (m *Middleware) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	if len(carrier) > 0 {
		for _, p := range params {
			p.Metadata = withCarrier(p.Metadata, carrier)
		}
	}
	return doInner(ctx)
}

// withCarrier adds carrier to a job's metadata unless it holds a trace.
func withCarrier(meta []byte, carrier propagation.MapCarrier) []byte {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		return meta // not an object: not weft's to change
	}
	if _, ok := m[metaKey]; ok {
		return meta
	}
	m[metaKey], _ = json.Marshal(carrier)
	b, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}

// Work implements rivertype.WorkerMiddleware.
func (m *Middleware) Work(ctx context.Context, j *rivertype.JobRow, doInner func(context.Context) error) error {
	var meta struct {
		Carrier propagation.MapCarrier `json:"otel"`
	}
	if json.Unmarshal(j.Metadata, &meta) != nil || len(meta.Carrier) == 0 {
		return doInner(ctx)
	}
	parent := propagator.Extract(ctx, meta.Carrier)
	if !trace.SpanContextFromContext(parent).IsValid() {
		return doInner(ctx)
	}
	ctx, span := m.tracer.Start(parent, "job "+j.Kind, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("river.kind", j.Kind), attribute.String("river.queue", j.Queue),
			attribute.Int64("river.job_id", j.ID), attribute.Int("river.attempt", j.Attempt)))
	defer span.End()
	err := doInner(ctx)
	End(span, err)
	return err
}

// End records err on span (nil is success); it does not end the span.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// Stamp adds ctx's trace id to a stitch's metadata (key trace_id), unless
// ctx has no trace or the metadata names one already.
func Stamp(ctx context.Context, meta json.RawMessage) json.RawMessage {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return meta
	}
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		return meta
	}
	if _, ok := m["trace_id"]; ok {
		return meta
	}
	m["trace_id"], _ = json.Marshal(sc.TraceID().String())
	b, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}
