package dbbench

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CreateAnchorTable creates the table of the webhook benchmark's anchor, a
// minimal webhook handler: a ledger of deliveries and nothing else.
func CreateAnchorTable(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_anchor_deliveries (
		delivery_id text PRIMARY KEY, payload jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create anchor table: %w", err)
	}
	return nil
}

// AnchorInsert is all the anchor writes for a delivery: one insert (a
// redelivery inserts nothing), committed as it is sent: one statement in
// an implicit transaction, one round trip. (It was BEGIN, INSERT, COMMIT:
// three round trips, each a wait for the pool's connection and the
// server, where weft's intake sends its write as one pipeline.)
func AnchorInsert(ctx context.Context, pool *pgxpool.Pool, deliveryID string, payload []byte) error {
	if _, err := pool.Exec(ctx, `INSERT INTO bench_anchor_deliveries (delivery_id, payload) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		deliveryID, payload); err != nil {
		return fmt.Errorf("anchor insert: %w", err)
	}
	return nil
}

// ThreadRows is the console bench's anchor for its thread page: the same
// stitches read bare (no LLM bodies, as the page reads them), every column
// fetched and none decoded.
func ThreadRows(ctx context.Context, pool *pgxpool.Pool, threadID string) (int, error) {
	return countRows(ctx, pool, `SELECT stitch_id, thread_id, previous_stitch_id, seq, stitch_type, content, model,
		input_tokens, output_tokens, latency_ms, tool_name, tool_input, tool_output, tool_error, metadata,
		source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at, created_at
		FROM stitches WHERE thread_id = $1 ORDER BY seq`, threadID)
}

// ListRows is the console bench's anchor for its list page: a keyset page
// of threads read bare, from the cursor (updated_at, thread_id) down, or
// from the top when after is empty.
func ListRows(ctx context.Context, pool *pgxpool.Pool, after, afterID string, limit int) (int, error) {
	if after == "" {
		return countRows(ctx, pool, `SELECT thread_id, goal, status, updated_at FROM threads
			ORDER BY updated_at DESC, thread_id DESC LIMIT $1`, limit)
	}
	return countRows(ctx, pool, `SELECT thread_id, goal, status, updated_at FROM threads
		WHERE (updated_at, thread_id) < ($1::timestamptz, $2::uuid)
		ORDER BY updated_at DESC, thread_id DESC LIMIT $3`, after, afterID, limit)
}

// countRows runs a query, reads its rows' raw bytes and counts them.
func countRows(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) (int, error) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("anchor read: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		_ = rows.RawValues()
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("anchor read: %w", err)
	}
	return n, nil
}
