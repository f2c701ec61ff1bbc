package replies

import (
	"github.com/weft-dev/weft/internal/httpapi"

	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the origin's totalRequests, successfulRequests,
// failedRequests, rateLimitEvents, latency and pagination events, as
// Prometheus series.
type metrics struct {
	requests   prometheus.Counter
	successes  *prometheus.CounterVec // by source
	failures   *prometheus.CounterVec // by code
	rateLimits prometheus.Counter
	latency    *prometheus.HistogramVec // by outcome
	// pagination is the origin's recordPagination: pages read on from a
	// cursor, and pages answered with more after them, by source.
	pagination *prometheus.CounterVec
}

// Pagination events.
const (
	pageContinued = "continued" // the request carried a cursor
	pageHasMore   = "has_more"  // the answer has a next page
)

// paged counts a successful page's pagination.
func (m *metrics) paged(src Source, cursor string, hasMore bool) {
	if cursor != "" {
		m.pagination.WithLabelValues(string(src), pageContinued).Inc()
	}
	if hasMore {
		m.pagination.WithLabelValues(string(src), pageHasMore).Inc()
	}
}

// latencyBuckets span a Postgres read (a millisecond) to a Discord call
// retried with backoff (seconds).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// newMetrics registers the series on reg; a nil reg leaves them
// unregistered (counted, never exported).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_thread_replies_requests_total", Help: "get-thread-replies calls.",
		}),
		successes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_thread_replies_successes_total", Help: "get-thread-replies calls answered, by source (weft: Postgres, discord: Discord's API, slack: Slack's API).",
		}, []string{"source"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_thread_replies_failures_total", Help: "get-thread-replies calls failed, by error code.",
		}, []string{"code"}),
		rateLimits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_thread_replies_rate_limited_total", Help: "get-thread-replies calls a platform rate limit stopped.",
		}),
		pagination: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_thread_replies_pagination_total", Help: "get-thread-replies pages by source and event (continued: read on from a cursor; has_more: answered with a next page).",
		}, []string{"source", "event"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_thread_replies_duration_seconds", Help: "get-thread-replies latency, retries included, by outcome.",
			Buckets: latencyBuckets,
		}, []string{"outcome"}),
	}
	// Every series exists from the start, at zero, so a rate() over them
	// works before the first failure of each kind.
	for _, src := range []Source{SourceWeft, SourceDiscord, SourceSlack} {
		m.successes.WithLabelValues(string(src))
		m.pagination.WithLabelValues(string(src), pageContinued)
		m.pagination.WithLabelValues(string(src), pageHasMore)
	}
	for _, c := range []httpapi.Code{httpapi.CodeNotFound, httpapi.CodeAuthentication, httpapi.CodeAuthorization,
		httpapi.CodeRateLimit, httpapi.CodeInvalidArgument, httpapi.CodeUnavailable} {
		m.failures.WithLabelValues(string(c))
	}
	for _, o := range []string{"success", "failure"} {
		m.latency.WithLabelValues(o)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.successes, m.failures, m.rateLimits, m.latency, m.pagination} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("replies: register metrics: %w", err)
		}
	}
	return m, nil
}
