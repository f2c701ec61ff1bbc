package db

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/weft-dev/weft/migrations"
)

// Migrator applies weft's embedded migrations. It holds a Postgres advisory
// lock while it works, so replicas starting together migrate once.
type Migrator struct {
	provider *goose.Provider
}

// NewMigrator returns a Migrator for the database behind pool.
func NewMigrator(pool *pgxpool.Pool, logger *slog.Logger) (*Migrator, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	return newMigrator(pool, logger, goose.WithSessionLocker(locker))
}

// NewPoolerMigrator is NewMigrator for a pool behind a transaction pooler,
// where a session's advisory lock would stay with whichever server
// connection took it: it locks with goose's lease row instead (table
// goose_lock, kept alive while it works, free 30 s after a crash).
func NewPoolerMigrator(pool *pgxpool.Pool, logger *slog.Logger) (*Migrator, error) {
	locker, err := lock.NewPostgresTableLocker()
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	return newMigrator(pool, logger, goose.WithLocker(locker))
}

func newMigrator(pool *pgxpool.Pool, logger *slog.Logger, locker goose.ProviderOption) (*Migrator, error) {
	p, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDBFromPool(pool), migrations.FS,
		locker, goose.WithSlog(logger), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return &Migrator{provider: p}, nil
}

// Up applies every pending migration.
func (m *Migrator) Up(ctx context.Context) ([]*goose.MigrationResult, error) {
	res, err := m.provider.Up(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate up: %w", err)
	}
	return res, nil
}

// Down rolls back the newest migration.
func (m *Migrator) Down(ctx context.Context) (*goose.MigrationResult, error) {
	res, err := m.provider.Down(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate down: %w", err)
	}
	return res, nil
}

// DownTo rolls back every migration newer than version (0: all of them).
func (m *Migrator) DownTo(ctx context.Context, version int64) ([]*goose.MigrationResult, error) {
	res, err := m.provider.DownTo(ctx, version)
	if err != nil {
		return res, fmt.Errorf("migrate down to %d: %w", version, err)
	}
	return res, nil
}

// Status lists every migration and whether it is applied.
func (m *Migrator) Status(ctx context.Context) ([]*goose.MigrationStatus, error) {
	st, err := m.provider.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	return st, nil
}

// Close releases the migrator's database handle (not the pool).
func (m *Migrator) Close() error { return m.provider.Close() }

// Migrate applies every pending migration: what `weft serve` does at start.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	return migrate(ctx, NewMigrator, pool, logger)
}

// MigrateThroughPooler is Migrate on a pool behind a transaction pooler
// (NewPoolerMigrator).
func MigrateThroughPooler(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	return migrate(ctx, NewPoolerMigrator, pool, logger)
}

func migrate(ctx context.Context, open func(*pgxpool.Pool, *slog.Logger) (*Migrator, error), pool *pgxpool.Pool, logger *slog.Logger) error {
	m, err := open(pool, logger)
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = m.Up(ctx)
	return err
}
