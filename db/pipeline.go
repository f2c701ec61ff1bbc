package db

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
)

// pipeline sends several generated statements in one round trip (a
// pgx.Batch) while the statements' text, arguments and scans all stay in
// dbsqlc: each step is a call of one generated method, made twice. Queued,
// the call puts its statement and arguments on the batch and fails with
// errQueued; once the batch is sent, the same call reads the statement's
// result instead. Whatever a step records from the queued call is
// overwritten when it runs again on the result, so that call has no effect
// beyond the batch. Steps translate their errors.
type pipeline struct {
	batch pgx.Batch
	steps []func(*dbsqlc.Queries) error
}

// errQueued is what a generated call returns while its statement is queued.
var errQueued = errors.New("db: statement queued")

// add queues step's statement; run reads its result with step again.
func (p *pipeline) add(step func(q *dbsqlc.Queries) error) {
	_ = step(dbsqlc.New(queuer{&p.batch}))
	p.steps = append(p.steps, step)
}

// len is the number of statements queued.
func (p *pipeline) len() int { return p.batch.Len() }

// run sends the batch on db and reads every result in order. The first
// step that fails stops the reading; its error comes back as the step
// returned it, so a step's own error types survive.
func (p *pipeline) run(ctx context.Context, db dbtx) error {
	res := db.SendBatch(ctx, &p.batch)
	q := dbsqlc.New(results{res})
	for _, step := range p.steps {
		if err := step(q); err != nil {
			_ = res.Close()
			return err
		}
	}
	return translate(res.Close())
}

// queuer is a dbsqlc.DBTX that queues each statement on a batch.
type queuer struct{ b *pgx.Batch }

func (q queuer) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	return pgconn.CommandTag{}, errQueued
}

func (q queuer) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	q.b.Queue(sql, args...)
	return nil, errQueued
}

func (q queuer) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	q.b.Queue(sql, args...)
	return queuedRow{}
}

type queuedRow struct{}

func (queuedRow) Scan(...any) error { return errQueued }

// results is a dbsqlc.DBTX that answers each statement with the next
// result of a sent batch; the statement and arguments were queued before.
type results struct{ r pgx.BatchResults }

func (r results) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) { return r.r.Exec() }

func (r results) Query(context.Context, string, ...any) (pgx.Rows, error) { return r.r.Query() }

func (r results) QueryRow(context.Context, string, ...any) pgx.Row { return r.r.QueryRow() }
