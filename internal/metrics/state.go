package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is what weft's database says at one scrape: the gauges no
// counter can keep, since every replica shares them.
type State struct {
	// Backlog is unsent outbox rows by platform, and OldestUnsent the age
	// of each platform's oldest one.
	Backlog      map[string]int64
	OldestUnsent map[string]time.Duration
	// Jobs counts River jobs by queue and state (finished ones excluded).
	Jobs []JobCount
	// StuckThreads is the stuck_threads view's row count.
	StuckThreads int64
}

// JobCount is the River jobs of one queue in one state.
type JobCount struct {
	Queue, State string
	Count        int64
}

// StateFunc reads State; a scrape gives it stateTimeout.
type StateFunc func(ctx context.Context) (*State, error)

// stateTimeout bounds a scrape's read: Prometheus' default scrape timeout
// is 10 s, and a slow database must not make /metrics hang.
const stateTimeout = 3 * time.Second

// stateCollector reads State at each scrape. With several replicas every
// one reports the same values: alerts take max() over them.
type stateCollector struct {
	read   StateFunc
	logger *slog.Logger

	backlog, oldest, jobs, stuck, up *prometheus.Desc
}

// WatchState registers on reg the gauges read through read at each scrape.
func WatchState(reg prometheus.Registerer, read StateFunc, logger *slog.Logger) error {
	return reg.Register(&stateCollector{read: read, logger: logger,
		backlog: prometheus.NewDesc("weft_outbox_backlog", "Outbox rows waiting to be sent (pending or being sent), by platform.", []string{"platform"}, nil),
		oldest:  prometheus.NewDesc("weft_outbox_oldest_unsent_seconds", "Age of the oldest outbox row waiting to be sent, by platform.", []string{"platform"}, nil),
		jobs:    prometheus.NewDesc("weft_river_jobs", "River jobs by queue and state (completed, cancelled and discarded ones excluded).", []string{"queue", "state"}, nil),
		stuck:   prometheus.NewDesc("weft_threads_stuck", "Threads running with a lapsed lease, or pending, for over 2 minutes, or resting with unanswered input (the stuck_threads view).", nil, nil),
		up:      prometheus.NewDesc("weft_state_up", "1 when this scrape could read the database's gauges, 0 when not (they are then absent).", nil, nil),
	})
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.backlog, c.oldest, c.jobs, c.stuck, c.up} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	s, err := c.read(ctx)
	if err != nil {
		c.logger.WarnContext(ctx, "metrics: read database gauges", slog.Any("error", err))
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for p, n := range s.Backlog {
		ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(n), p)
	}
	for p, d := range s.OldestUnsent {
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, d.Seconds(), p)
	}
	for _, j := range s.Jobs {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(j.Count), j.Queue, j.State)
	}
	ch <- prometheus.MustNewConstMetric(c.stuck, prometheus.GaugeValue, float64(s.StuckThreads))
}

// Collected is a platform with gauges of its own (its connections, say),
// which internal/app registers with weft's; declared here, where the
// collector type belongs, so that internal/surface stays free of it.
type Collected interface {
	Collectors() []prometheus.Collector
}

// Register registers each of cs with reg.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
