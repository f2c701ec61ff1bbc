package db

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/internal/thread"
)

// RecordInbound writes an inbound delivery to the ledger if neither its
// delivery id nor its event key is there yet. It reports whether it was new:
// false means a redelivery, which the caller acknowledges and otherwise
// ignores. Inside the transaction that acts on the event, a concurrent
// duplicate waits on the unique index and then reports false, so exactly one
// of them acts.
func (q *Queries) RecordInbound(ctx context.Context, in thread.Inbound) (bool, error) {
	tag, err := q.db.Exec(ctx, insertInboundSQL+` ON CONFLICT DO NOTHING`, inboundArgs(in)...)
	if err != nil {
		return false, fmt.Errorf("record inbound delivery: %w", translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

const insertInboundSQL = `
	INSERT INTO webhook_deliveries (platform, delivery_id, event_key, event_type, action, outcome, thread_id, payload)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// inboundArgs are insertInboundSQL's arguments for in.
func inboundArgs(in thread.Inbound) []any {
	if in.Outcome == "" {
		in.Outcome = thread.InboundProcessed
	}
	return []any{in.Platform, in.DeliveryID, nullString(in.EventKey), in.EventType, nullString(in.Action), in.Outcome,
		nullUUID(in.ThreadID), nullJSON(in.Payload)}
}

// SetInboundThread links a recorded delivery to the thread it led to, once
// that thread exists.
func (q *Queries) SetInboundThread(ctx context.Context, platform thread.Platform, deliveryID string, threadID string) error {
	_, err := q.db.Exec(ctx, `UPDATE webhook_deliveries SET thread_id = $3 WHERE platform = $1 AND delivery_id = $2`,
		platform, deliveryID, threadID)
	if err != nil {
		return fmt.Errorf("set inbound thread: %w", translate(err))
	}
	return nil
}
