package dbbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
)

// Trips counts what a pool sends the server, as a pgx tracer: round trips
// (a statement sent alone, or a whole batch), statements (a batch's each
// count) and commits. Counts, unlike timings, do not depend on the
// machine's load, so a test may bound them.
type Trips struct {
	roundTrips, statements, commits atomic.Int64
	mu                              sync.Mutex
	byName                          map[string]int64
}

var (
	_ pgx.QueryTracer = (*Trips)(nil)
	_ pgx.BatchTracer = (*Trips)(nil)
)

// TripCount is a snapshot of a Trips.
type TripCount struct {
	RoundTrips, Statements, Commits int64
}

// Sub is c less an earlier snapshot.
func (c TripCount) Sub(earlier TripCount) TripCount {
	return TripCount{c.RoundTrips - earlier.RoundTrips, c.Statements - earlier.Statements, c.Commits - earlier.Commits}
}

// Per formats c divided by n, as "r round trips, s statements, c commits".
func (c TripCount) Per(n int) string {
	f := func(v int64) float64 { return float64(v) / float64(max(n, 1)) }
	return fmt.Sprintf("%.1f round trips, %.1f statements, %.1f commits", f(c.RoundTrips), f(c.Statements), f(c.Commits))
}

// Count is the counts so far.
func (t *Trips) Count() TripCount {
	return TripCount{t.roundTrips.Load(), t.statements.Load(), t.commits.Load()}
}

// TraceQueryStart implements pgx.QueryTracer. A commit is counted when it
// is sent: pgx commits with a plain "commit" statement.
func (t *Trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.roundTrips.Add(1)
	t.statements.Add(1)
	t.name(d.SQL)
	if strings.EqualFold(strings.TrimSpace(d.SQL), "commit") {
		t.commits.Add(1)
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *Trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip.
func (t *Trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.roundTrips.Add(1)
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (t *Trips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	t.statements.Add(1)
	t.name(d.SQL)
}

// name counts a statement by its name: sqlc's and River's "-- name: X"
// comment, else its first line.
func (t *Trips) name(sql string) {
	line, _, _ := strings.Cut(strings.TrimSpace(sql), "\n")
	line = strings.TrimPrefix(line, "-- name: ")
	if i := strings.Index(line, " :"); i > 0 {
		line = line[:i]
	}
	if len(line) > 60 {
		line = line[:60]
	}
	t.mu.Lock()
	if t.byName == nil {
		t.byName = map[string]int64{}
	}
	t.byName[line]++
	t.mu.Unlock()
}

// ByName is how many statements of each name were sent so far.
func (t *Trips) ByName() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.byName))
	for k, v := range t.byName {
		out[k] = v
	}
	return out
}

// NamesPer formats the statements sent between earlier and now (two
// ByName snapshots) per n, the most frequent first, as "name ×c".
func NamesPer(now, earlier map[string]int64, n int) string {
	type kv struct {
		k string
		v int64
	}
	var rows []kv
	for k, v := range now {
		if d := v - earlier[k]; d > 0 {
			rows = append(rows, kv{k, d})
		}
	}
	slices.SortFunc(rows, func(a, b kv) int { return int(b.v - a.v) })
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = fmt.Sprintf("%s ×%.2f", r.k, float64(r.v)/float64(max(n, 1)))
	}
	return strings.Join(parts, ", ")
}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *Trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// OpenCounting opens a pool on url, as db.Open does, whose traffic t
// counts.
func OpenCounting(ctx context.Context, url string, t *Trips) (*pgxpool.Pool, error) {
	return db.OpenTraced(ctx, url, t)
}
