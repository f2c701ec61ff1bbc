package db

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// RecordInbound writes an inbound delivery to the ledger if neither its
// delivery id nor its event key is there yet. It reports whether it was new:
// false means a redelivery, which the caller acknowledges and otherwise
// ignores. Inside the transaction that acts on the event, a concurrent
// duplicate waits on the unique index and then reports false, so exactly one
// of them acts.
func (q *Queries) RecordInbound(ctx context.Context, in thread.Inbound) (bool, error) {
	n, err := q.gen.RecordInbound(ctx, dbsqlc.RecordInboundParams(inboundParams(in)))
	if err != nil {
		return false, fmt.Errorf("record inbound delivery: %w", translate(err))
	}
	return n == 1, nil
}

// inboundParams are the ledger row of in.
func inboundParams(in thread.Inbound) dbsqlc.InsertInboundParams {
	if in.Outcome == "" {
		in.Outcome = thread.InboundProcessed
	}
	return dbsqlc.InsertInboundParams{
		Platform:   string(in.Platform),
		DeliveryID: in.DeliveryID,
		EventKey:   nullString(in.EventKey),
		EventType:  in.EventType,
		Action:     nullString(in.Action),
		Outcome:    string(in.Outcome),
		ThreadID:   nullUUID(in.ThreadID),
		Payload:    nullJSON(in.Payload),
	}
}

// SetInboundThread links a recorded delivery to the thread it led to, once
// that thread exists.
func (q *Queries) SetInboundThread(ctx context.Context, platform thread.Platform, deliveryID string, threadID string) error {
	err := q.gen.SetInboundThread(ctx, dbsqlc.SetInboundThreadParams{Platform: string(platform), DeliveryID: deliveryID, ThreadID: threadID})
	if err != nil {
		return fmt.Errorf("set inbound thread: %w", translate(err))
	}
	return nil
}
