package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
	b := &pgx.Batch{}
	var g Gauges
	b.Queue(`SELECT platform, count(*), extract(epoch FROM now() - min(created_at))::float8
		FROM platform_deliveries WHERE status IN ('pending', 'sending') GROUP BY platform`).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var bl Backlog
			var secs float64
			if err := rows.Scan(&bl.Platform, &bl.Count, &secs); err != nil {
				return err
			}
			bl.Oldest = time.Duration(secs * float64(time.Second))
			g.Backlog = append(g.Backlog, bl)
		}
		return rows.Err()
	})
	b.Queue(`SELECT queue, state::text, count(*) FROM river_job
		WHERE state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY queue, state`).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var j JobCount
			if err := rows.Scan(&j.Queue, &j.State, &j.Count); err != nil {
				return err
			}
			g.Jobs = append(g.Jobs, j)
		}
		return rows.Err()
	})
	b.Queue(`SELECT count(*) FROM stuck_threads`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&g.StuckThreads)
	})
	if err := q.db.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("gauges: %w", translate(err))
	}
	return &g, nil
}
