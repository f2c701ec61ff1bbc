package dbbench

import (
	"context"
	"fmt"
	"strings"
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
func (t *Trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	t.statements.Add(1)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *Trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// OpenCounting opens a pool on url, as db.Open does, whose traffic t
// counts.
func OpenCounting(ctx context.Context, url string, t *Trips) (*pgxpool.Pool, error) {
	return db.OpenTraced(ctx, url, t)
}
