// Package metrics holds weft's Prometheus series: one Metrics value,
// registered on a registry the caller owns (never the global one), handed
// to the components that count. Its label sets are bounded: platforms,
// outcomes, route patterns, configured models and registered tools, never
// a thread, user or message id. A nil *Metrics counts nothing, so a
// component built without one (a test, a CLI command) needs no checks.
package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is every series weft exports but get-thread-replies' own.
type Metrics struct {
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	events *prometheus.CounterVec

	turns        *prometheus.CounterVec
	turnDuration prometheus.Histogram
	turnSteps    prometheus.Histogram

	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelInput    *prometheus.CounterVec
	modelOutput   *prometheus.CounterVec

	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec

	sends        *prometheus.CounterVec
	sendDuration *prometheus.HistogramVec
	giveUps      *prometheus.CounterVec

	leasesTakenOver prometheus.Counter
	sweeps          *prometheus.CounterVec
}

// Outcomes of an inbound event (a webhook delivery, a gateway message).
const (
	EventAccepted  = "accepted"  // stored, and answered by a turn if it asks for one
	EventDuplicate = "duplicate" // a redelivery: nothing written
	EventIgnored   = "ignored"   // recorded, not acted on
	EventRefused   = "refused"   // bad signature, stale, malformed, oversized: nothing written
	EventShed      = "shed"      // 503 before any work: too many in flight
	EventFailed    = "failed"    // verified but not stored (database down): 503, retried by the platform
)

// Outcomes of a turn job.
const (
	TurnAnswered = "answered" // the turn ran and recorded its steps
	TurnIdle     = "idle"     // nothing to answer (another turn had)
	TurnBusy     = "busy"     // another turn holds the thread: snoozed
	TurnStopped  = "stopped"  // aborted by the user, or the lease was lost
	TurnError    = "error"    // failed; River retries it
	TurnGaveUp   = "gave_up"  // failed its last attempt: the thread is failed
	TurnWaiting  = "waiting"  // the model is unavailable: snoozed to retry
)

// Generic outcomes of a call (model, tool, send).
const (
	OK        = "ok"
	Error     = "error"
	Cancelled = "cancelled"
)

// Event platforms beyond thread.Platform's values: where a delivery came in.
const (
	SourceWebhook = "webhook"
	SourceGateway = "gateway"
)

// secondsBuckets span a database write (milliseconds) to a slow model call
// or a send retried with backoff (a minute).
var secondsBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// turnBuckets span a turn: one fast model call to many slow ones.
var turnBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// stepBuckets count model calls per turn, up to WEFT_MAX_STEPS' default.
var stepBuckets = []float64{1, 2, 3, 4, 5, 7, 10, 15, 20}

// New registers weft's series, and the Go and process collectors, on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route pattern and method.",
			Buckets: secondsBuckets,
		}, []string{"route", "method"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_events_total", Help: "Inbound events (webhook deliveries, gateway messages) by platform, source and outcome.",
		}, []string{"platform", "source", "outcome"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_turns_total", Help: "Turn jobs worked, by outcome.",
		}, []string{"outcome"}),
		turnDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "weft_turn_duration_seconds", Help: "Time a turn ran holding its thread's lease, model calls included.",
			Buckets: turnBuckets,
		}),
		turnSteps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "weft_turn_steps", Help: "Model calls one turn made.", Buckets: stepBuckets,
		}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_model_calls_total", Help: "Model calls by provider, configured model and outcome.",
		}, []string{"provider", "model", "outcome"}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_model_call_duration_seconds", Help: "Model call latency, the adapter's retries included.",
			Buckets: secondsBuckets,
		}, []string{"provider", "model", "outcome"}),
		modelInput: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_model_input_tokens_total", Help: "Prompt tokens the model reported, by provider and model.",
		}, []string{"provider", "model"}),
		modelOutput: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_model_output_tokens_total", Help: "Completion tokens the model reported, by provider and model.",
		}, []string{"provider", "model"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_tool_calls_total", Help: "Agent tool calls by tool and outcome.",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_tool_call_duration_seconds", Help: "Agent tool call latency by tool and outcome.",
			Buckets: secondsBuckets,
		}, []string{"tool", "outcome"}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_outbox_send_attempts_total", Help: "Attempts to post an outbox row on its platform, by platform and outcome.",
		}, []string{"platform", "outcome"}),
		sendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_outbox_send_duration_seconds", Help: "Time one send attempt took, by platform and outcome.",
			Buckets: secondsBuckets,
		}, []string{"platform", "outcome"}),
		giveUps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_outbox_give_ups_total", Help: "Outbox rows failed for good after their last attempt, by platform.",
		}, []string{"platform"}),
		leasesTakenOver: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_leases_taken_over_total", Help: "Threads whose turn a sweep resumed: their lease lapsed, or their turn job's replica died.",
		}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_sweeps_total", Help: "Leader sweeps run, by kind (sweep: stranded turns and sends; reclaim: lapsed send claims) and outcome.",
		}, []string{"kind", "outcome"}),
	}
	// Series that alerts divide by exist from the start, at zero.
	for _, o := range []string{TurnAnswered, TurnIdle, TurnBusy, TurnStopped, TurnError, TurnGaveUp, TurnWaiting} {
		m.turns.WithLabelValues(o)
	}
	for _, k := range []string{"sweep", "reclaim"} {
		for _, o := range []string{OK, Error} {
			m.sweeps.WithLabelValues(k, o)
		}
	}
	cs := []prometheus.Collector{
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.events, m.turns, m.turnDuration, m.turnSteps,
		m.modelCalls, m.modelDuration, m.modelInput, m.modelOutput, m.toolCalls, m.toolDuration,
		m.sends, m.sendDuration, m.giveUps, m.leasesTakenOver, m.sweeps,
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return m, nil
}

// HTTPRequest counts one answered request. route is the router's pattern
// ("/api/v1/threads/{id}"), never the path.
func (m *Metrics) HTTPRequest(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(route, method, fmt.Sprint(code)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// Event counts one inbound event.
func (m *Metrics) Event(platform, source, outcome string) {
	if m == nil {
		return
	}
	m.events.WithLabelValues(platform, source, outcome).Inc()
}

// Turn counts a turn job that ended before it ran (idle, busy, error).
func (m *Metrics) Turn(outcome string) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(outcome).Inc()
}

// TurnRan counts a turn that ran for d under its lease, making steps
// model calls.
func (m *Metrics) TurnRan(outcome string, d time.Duration, steps int) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(outcome).Inc()
	m.turnDuration.Observe(d.Seconds())
	m.turnSteps.Observe(float64(steps))
}

// ModelCall counts one model call and the tokens it reported.
func (m *Metrics) ModelCall(provider, model, outcome string, d time.Duration, input, output int) {
	if m == nil {
		return
	}
	m.modelCalls.WithLabelValues(provider, model, outcome).Inc()
	m.modelDuration.WithLabelValues(provider, model, outcome).Observe(d.Seconds())
	m.modelInput.WithLabelValues(provider, model).Add(float64(input))
	m.modelOutput.WithLabelValues(provider, model).Add(float64(output))
}

// ToolCall counts one tool call. tool must be a registered name (or a
// fixed stand-in for one the model made up).
func (m *Metrics) ToolCall(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolDuration.WithLabelValues(tool, outcome).Observe(d.Seconds())
}

// Send counts one attempt to post an outbox row.
func (m *Metrics) Send(platform, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.sends.WithLabelValues(platform, outcome).Inc()
	m.sendDuration.WithLabelValues(platform, outcome).Observe(d.Seconds())
}

// GaveUp counts an outbox row failed for good.
func (m *Metrics) GaveUp(platform string) {
	if m == nil {
		return
	}
	m.giveUps.WithLabelValues(platform).Inc()
}

// Sweep counts a leader sweep of kind ("sweep" or "reclaim") and the
// threads whose turns it resumed.
func (m *Metrics) Sweep(kind string, err error, takenOver int) {
	if m == nil {
		return
	}
	outcome := OK
	if err != nil {
		outcome = Error
	}
	m.sweeps.WithLabelValues(kind, outcome).Inc()
	if err == nil {
		m.leasesTakenOver.Add(float64(takenOver))
	}
}

// Outcome is Error for a non-nil error, Cancelled when ctx ended, OK
// otherwise.
func Outcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return OK
	case ctx.Err() != nil:
		return Cancelled
	}
	return Error
}
