package dbbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// queueFillPerSecond is how many jobs per second of measurement the
// baseline's table is filled with: about twice the best single-claim rate
// measured on a 2-core box (docs/architecture.md), so the loop never runs
// dry.
const queueFillPerSecond = 10_000

// ClaimComplete is the queue baseline: a plain SKIP LOCKED claim and
// complete loop on a bare jobs table, one job per claim and each statement
// its own commit, as a worker's would be (the claim+complete ceilings of
// docs/architecture.md). It fills the table, then runs conns claimers for d.
func ClaimComplete(ctx context.Context, pool *pgxpool.Pool, conns int, d time.Duration) (Rate, error) {
	if _, err := pool.Exec(ctx, `DROP TABLE IF EXISTS bench_jobs;
		CREATE TABLE bench_jobs (id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'available',
			kind text NOT NULL DEFAULT 'process_stitch', args jsonb NOT NULL DEFAULT '{}',
			attempt int NOT NULL DEFAULT 0, attempted_at timestamptz, finalized_at timestamptz,
			created_at timestamptz NOT NULL DEFAULT now());
		CREATE INDEX bench_jobs_available_idx ON bench_jobs (id) WHERE state = 'available'`); err != nil {
		return Rate{}, fmt.Errorf("create baseline queue: %w", err)
	}
	fill := max(queueFillPerSecond, int(d.Seconds()*queueFillPerSecond))
	if _, err := pool.Exec(ctx, `INSERT INTO bench_jobs (args) SELECT jsonb_build_object('n', g) FROM generate_series(1, $1::int) g`, fill); err != nil {
		return Rate{}, fmt.Errorf("fill baseline queue: %w", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE bench_jobs`); err != nil {
		return Rate{}, fmt.Errorf("vacuum baseline queue: %w", err)
	}
	return loop(ctx, conns, d, func(ctx context.Context, _ int, _ *rand.Rand) error {
		var id int64
		if err := pool.QueryRow(ctx, `UPDATE bench_jobs SET state = 'running', attempt = attempt + 1, attempted_at = now()
			WHERE id = (SELECT id FROM bench_jobs WHERE state = 'available' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
			RETURNING id`).Scan(&id); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if _, err := pool.Exec(ctx, `UPDATE bench_jobs SET state = 'completed', finalized_at = now() WHERE id = $1`, id); err != nil {
			return fmt.Errorf("complete: %w", err)
		}
		return nil
	})
}
