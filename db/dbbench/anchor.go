package dbbench

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CreateAnchorTable creates the table of the linear benchmark's anchor, a
// minimal webhook handler: a ledger of deliveries and nothing else.
func CreateAnchorTable(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_anchor_deliveries (
		delivery_id text PRIMARY KEY, payload jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create anchor table: %w", err)
	}
	return nil
}

// AnchorInsert is all the anchor writes for a delivery: one insert (a
// redelivery inserts nothing), one commit.
func AnchorInsert(ctx context.Context, pool *pgxpool.Pool, deliveryID string, payload []byte) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("anchor begin: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO bench_anchor_deliveries (delivery_id, payload) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		deliveryID, payload); err != nil {
		return fmt.Errorf("anchor insert: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("anchor commit: %w", err)
	}
	return nil
}
