// Package db is weft's Postgres store: the connection pool, transactions,
// migrations, and every query, taking and returning the domain types of
// package thread. No SQL lives outside this package (ops views and tests
// aside).
package db

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// dbtx is what queries run on: the pool, or a transaction.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Queries holds every query. Store runs them on the pool, Tx inside a
// transaction; a query that needs several statements to be atomic opens a
// transaction on the pool, or a savepoint inside a Tx.
type Queries struct {
	db dbtx
}

// Open connects a pool to the database at url (a DATABASE_URL).
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

// Store is the database: queries on the pool, and InTx for atomic groups.
type Store struct {
	Queries
	pool   *pgxpool.Pool
	logger *slog.Logger
}

// New returns a Store on pool.
func New(pool *pgxpool.Pool, logger *slog.Logger) *Store {
	return &Store{Queries: Queries{db: pool}, pool: pool, logger: logger}
}

// Pool is the underlying pool, for River and health checks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }
