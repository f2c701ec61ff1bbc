package kit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// River's fetch settings as processor.New sets them, so the no-op run
// measures the queue the turns run on.
const (
	riverFetchCooldown     = time.Millisecond
	riverFetchPollInterval = time.Second
	riverNoopQueue         = "bench_noop"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "weft_bench_noop" }

type noopWorker struct{ river.WorkerDefaults[noopArgs] }

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// RiverNoop burns down n queued no-op jobs with workers River workers
// configured as weft's processor configures them, and returns the rate
// from the first job's start to the last one's completion: the queue's own
// share of a turn, between the bare SKIP LOCKED loop and a whole turn.
func RiverNoop(ctx context.Context, pool *pgxpool.Pool, workers, n int) (Rate, error) {
	ws := river.NewWorkers()
	river.AddWorker(ws, noopWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:            slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{riverNoopQueue: {MaxWorkers: workers}},
		Workers:           ws,
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: riverFetchPollInterval,
	})
	if err != nil {
		return Rate{}, fmt.Errorf("river client: %w", err)
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}, InsertOpts: &river.InsertOpts{Queue: riverNoopQueue}}
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		return Rate{}, fmt.Errorf("insert no-op jobs: %w", err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return Rate{}, fmt.Errorf("start river: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	}()
	var first time.Time
	timeout := time.NewTimer(time.Minute + time.Duration(n)*time.Millisecond)
	defer timeout.Stop()
	for done := 0; done < n; {
		select {
		case <-ctx.Done():
			return Rate{}, ctx.Err()
		case <-timeout.C:
			return Rate{}, fmt.Errorf("river no-op: %d of %d jobs completed", done, n)
		case ev := <-events:
			if ev.Job.Kind != (noopArgs{}).Kind() {
				continue
			}
			if done == 0 {
				// The first completion's job started at its attempt.
				first = *ev.Job.AttemptedAt
			}
			done++
		}
	}
	return Rate{Ops: int64(n), Elapsed: time.Since(first)}, nil
}
