package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Tx is a transaction: every query of Queries, run inside it.
type Tx struct {
	Queries
	tx pgx.Tx
}

// Pgx is the underlying transaction, for River's InsertTx.
func (t *Tx) Pgx() pgx.Tx { return t.tx }

type inTxKey struct{}

// errNestedTx guards against a deadlock-prone mistake: a transaction opened on
// the pool while the caller already holds one would take a second connection
// and could wait on the first's locks forever.
var errNestedTx = errors.New("db: InTx called inside InTx; use the *Tx you were given")

// InTx runs fn in a transaction: committed when fn returns nil, rolled back
// when it returns an error or panics. It never retries, so fn need not be
// idempotent.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (err error) {
	if ctx.Value(inTxKey{}) != nil {
		return errNestedTx
	}
	ptx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	defer func() {
		if p := recover(); p != nil {
			_ = ptx.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
		if err != nil {
			// The rollback must run even when ctx was cancelled, or the
			// connection goes back to the pool mid-transaction.
			_ = ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	tx := &Tx{Queries: newQueries(ptx), tx: ptx}
	if err := fn(context.WithValue(ctx, inTxKey{}, true), tx); err != nil {
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	return nil
}

// atomic runs fn in a transaction of its own, or in a savepoint when q is
// already a transaction, so a multi-statement query is all-or-nothing either way.
func (q *Queries) atomic(ctx context.Context, fn func(q *Queries) error) error {
	return pgx.BeginFunc(ctx, q.db, func(tx pgx.Tx) error {
		q := newQueries(tx)
		return fn(&q)
	})
}

// Savepoint runs fn in a savepoint of t: when fn fails, what it wrote is
// undone and t goes on.
func (t *Tx) Savepoint(ctx context.Context, fn func(tx *Tx) error) error {
	return pgx.BeginFunc(ctx, t.tx, func(sp pgx.Tx) error {
		return fn(&Tx{Queries: newQueries(sp), tx: sp})
	})
}
