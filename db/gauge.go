package db

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
)

// Gauges is what /metrics reads from the database at each scrape.
type Gauges struct {
	// Backlog is the outbox rows waiting to be sent, per platform.
	Backlog []Backlog
	// Jobs counts River jobs by queue and state, finished ones excluded.
	Jobs []JobCount
	// StuckThreads counts the stuck_threads view.
	StuckThreads int64
}

// Backlog is one platform's unsent outbox rows.
type Backlog struct {
	Platform string
	Count    int64
	Oldest   time.Duration
}

// JobCount is the River jobs of one queue in one state.
type JobCount struct {
	Queue, State string
	Count        int64
}

// Gauges reads the scrape's gauges in one round trip.
func (q *Queries) Gauges(ctx context.Context) (*Gauges, error) {
	var (
		g       Gauges
		backlog []dbsqlc.OutboxBacklogByPlatformRow
		jobs    []dbsqlc.JobCountsRow
		p       pipeline
	)
	p.add(func(q *dbsqlc.Queries) (err error) {
		backlog, err = q.OutboxBacklogByPlatform(ctx)
		return translate(err)
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		jobs, err = q.JobCounts(ctx)
		return translate(err)
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		g.StuckThreads, err = q.StuckThreadCount(ctx)
		return translate(err)
	})
	if err := p.run(ctx, q.db); err != nil {
		return nil, fmt.Errorf("gauges: %w", err)
	}
	for _, b := range backlog {
		g.Backlog = append(g.Backlog, Backlog{Platform: b.Platform, Count: b.Count,
			Oldest: time.Duration(b.OldestSeconds * float64(time.Second))})
	}
	for _, j := range jobs {
		g.Jobs = append(g.Jobs, JobCount(j))
	}
	return &g, nil
}
