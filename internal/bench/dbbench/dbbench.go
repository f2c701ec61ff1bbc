// Package dbbench measures the thread store against the machine's own
// ceiling: stitch appends through package db beside raw single-row INSERTs of
// the same payload, measured in the same run, and history reads on a table
// seeded to production size. `weft bench store` prints its report.
package dbbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/thread"
)

// Payload is an llm_call-shaped JSON document of about 1 KB, the size the
// ceilings in docs/architecture.md were measured with.
var Payload = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are weft, a helpful engineering agent. ` +
	strings.Repeat("Keep answers short and concrete. ", 20) + `"},{"role":"user","content":"Why is the nightly build red?"}],` +
	`"tools":[{"name":"search_thread_messages","description":"Search messages in a thread"}],"temperature":0.2}`)

// Seed fills the store with stitches spread over threads, interleaved the
// way concurrent conversations write them (so one thread's rows sit on
// different pages), each thread a valid chain. It is set-based: a million
// stitches take about a minute.
func Seed(ctx context.Context, pool *pgxpool.Pool, threads, stitches int) ([]uuid.UUID, error) {
	perThread := stitches / threads
	if perThread < 1 {
		return nil, fmt.Errorf("seed: %d stitches cannot fill %d threads", stitches, threads)
	}
	stmts := []string{
		`INSERT INTO threads (thread_id, thread_type, goal, status, waiting_reason, stitch_count, head_stitch_id)
		 SELECT md5('t' || t)::uuid, 'autonomous', 'bench thread ' || t, 'waiting', 'idle', $2::bigint, md5('s' || t || '-' || $2::bigint)::uuid
		 FROM generate_series(0, $1::int - 1) t`,
		`INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type, llm_request, created_at)
		 SELECT md5('s' || (g % $1::bigint) || '-' || (g / $1::bigint + 1))::uuid,
		        md5('t' || (g % $1))::uuid,
		        CASE WHEN g >= $1 THEN md5('s' || (g % $1) || '-' || (g / $1))::uuid END,
		        g / $1 + 1,
		        (ARRAY['llm_call','tool_call','agent_thought','discord_message'])[1 + g % 4],
		        $3::jsonb,
		        now() - interval '1 millisecond' * ($1 * $2 - g)
		 FROM generate_series(0::bigint, $1::bigint * $2::bigint - 1) g`,
	}
	for i, s := range stmts {
		args := []any{threads, perThread}
		if i == 1 {
			args = append(args, string(Payload))
		}
		if _, err := pool.Exec(ctx, s, args...); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE threads; ANALYZE stitches`); err != nil {
		return nil, fmt.Errorf("seed analyze: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT thread_id FROM threads WHERE goal LIKE 'bench thread %'`)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// loop runs op from conns goroutines for d and counts successes; the first
// error stops it.
func loop(ctx context.Context, conns int, d time.Duration, op func(ctx context.Context, worker int, rnd *rand.Rand) error) (kit.Rate, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ops atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for ctx.Err() == nil {
				if err := op(ctx, w, rnd); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	return kit.Rate{Ops: ops.Load(), Elapsed: time.Since(start)}, firstErr
}

// Appends appends llm_call stitches of Payload to random threads through
// store for d, from conns goroutines.
func Appends(ctx context.Context, store *db.Store, threads []uuid.UUID, conns int, d time.Duration) (kit.Rate, error) {
	return loop(ctx, conns, d, func(ctx context.Context, _ int, rnd *rand.Rand) error {
		_, err := store.AppendStitch(ctx, thread.Stitch{
			ThreadID: threads[rnd.IntN(len(threads))], Type: thread.StitchLLMCall, LLMRequest: Payload,
		})
		return err
	})
}

// RawInserts is the baseline: single-row INSERTs of the same payload into a
// table with the shape of the ceiling measurement (a uuid key and one
// (thread_id, created_at) index), no chain and no thread lock.
func RawInserts(ctx context.Context, pool *pgxpool.Pool, threads []uuid.UUID, conns int, d time.Duration) (kit.Rate, error) {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_raw_stitches (
		id uuid PRIMARY KEY DEFAULT gen_random_uuid(), thread_id uuid NOT NULL, previous_stitch_id uuid,
		stitch_type text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
		CREATE INDEX IF NOT EXISTS bench_raw_thread_created ON bench_raw_stitches (thread_id, created_at)`); err != nil {
		return kit.Rate{}, fmt.Errorf("create baseline table: %w", err)
	}
	return loop(ctx, conns, d, func(ctx context.Context, _ int, rnd *rand.Rand) error {
		_, err := pool.Exec(ctx, `INSERT INTO bench_raw_stitches (thread_id, previous_stitch_id, stitch_type, payload)
			VALUES ($1, gen_random_uuid(), 'llm_call', $2)`, threads[rnd.IntN(len(threads))], Payload)
		return err
	})
}

// LastN reads the newest n stitches of random threads through store, one
// connection, samples times, and returns the sorted latencies.
func LastN(ctx context.Context, store *db.Store, threads []uuid.UUID, n, samples int) (kit.Latencies, error) {
	rnd := rand.New(rand.NewPCG(1, 2))
	out := make(kit.Latencies, 0, samples)
	for range samples {
		id := threads[rnd.IntN(len(threads))]
		start := time.Now()
		got, err := store.Stitches(ctx, id, db.StitchPage{Limit: n, Newest: true})
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		if len(got) == 0 {
			return nil, fmt.Errorf("thread %s has no stitches", id)
		}
	}
	slices.Sort(out)
	return out, nil
}
