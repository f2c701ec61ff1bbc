package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

func insertOutboxParams(o thread.Outbox) dbsqlc.InsertOutboxParams {
	return dbsqlc.InsertOutboxParams{
		DeliveryID: o.ID,
		ThreadID:   o.ThreadID,
		StitchID:   nullUUID(o.StitchID),
		Platform:   string(o.Platform),
		Target:     o.Target,
		Kind:       string(o.Kind),
		Body:       o.Body,
	}
}

// InsertOutbox queues a message for a platform. Call it in the transaction
// that writes the stitch it comes from.
func (q *Queries) InsertOutbox(ctx context.Context, o thread.Outbox) (*thread.Outbox, error) {
	if o.ID == uuid.Nil {
		o.ID = thread.NewID()
	}
	out, err := outboxOf(q.gen.InsertOutbox(ctx, insertOutboxParams(o)))
	if err != nil {
		return nil, fmt.Errorf("insert outbox: %w", err)
	}
	return out, nil
}

// Outbox returns one outbox row.
func (q *Queries) Outbox(ctx context.Context, id uuid.UUID) (*thread.Outbox, error) {
	o, err := outboxOf(q.gen.Outbox(ctx, id))
	if err != nil {
		return nil, fmt.Errorf("get outbox %s: %w", id, err)
	}
	return o, nil
}

// ClaimOutbox takes one outbox row for sending, for lease: it must be due,
// first in line on its surface, and either pending or claimed by a sender
// whose claim lapsed (a crash). It fails with thread.ErrDeliveryNotClaimable
// otherwise, returning the row as it stands so the caller can tell why
// without reading it again, and with thread.ErrNotFound for an unknown id.
// Each claim counts an attempt. An answer (a response, a question, an
// error) first drops the progress posts before it on its surface that
// failed and wait for a retry (thread.OutboxDropped), in the same round
// trip: they would hold it up for as long as they keep failing, and are
// pointless once it is ready.
func (q *Queries) ClaimOutbox(ctx context.Context, id uuid.UUID, lease time.Duration) (*thread.Outbox, error) {
	var o *thread.Outbox
	var p pipeline
	p.add(func(q *dbsqlc.Queries) error {
		_, err := q.DropSuperseded(ctx, id)
		return translate(err)
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		o, err = outboxOf(q.ClaimOutbox(ctx, dbsqlc.ClaimOutboxParams{DeliveryID: id, LeaseMs: lease.Milliseconds()}))
		return err
	})
	err := p.run(ctx, q.db)
	if err == nil {
		return o, nil
	}
	if !errors.Is(err, thread.ErrNotFound) {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	cur, gerr := q.Outbox(ctx, id)
	if gerr != nil {
		return nil, fmt.Errorf("claim outbox: %w", gerr)
	}
	return cur, fmt.Errorf("claim outbox %s: %w", id, thread.ErrDeliveryNotClaimable)
}

// ReclaimLapsedOutbox releases up to limit rows whose sender's claim lapsed
// (an express send that never happened, or a sender that died), to be sent
// again at once, and returns them: the caller enqueues their delivery jobs
// in the same transaction. Rows another reclaim holds are skipped.
func (q *Queries) ReclaimLapsedOutbox(ctx context.Context, limit int) ([]thread.Outbox, error) {
	rows, err := q.gen.ReclaimLapsedOutbox(ctx, int32(limit))
	out, err := mapAll(rows, err, outboxOf)
	if err != nil {
		return nil, fmt.Errorf("reclaim lapsed outbox: %w", err)
	}
	return out, nil
}

// MarkOutboxSent records that the platform took the message, and its id
// there, and returns the id of the row that waited in line behind it on
// its surface (uuid.Nil when none), in one statement. It does not wait for
// the commit's flush (see unflushedCommit): should a database crash forget
// the mark, the row's claim lapses, the reclaim hands it to a delivery job,
// and the platform takes the send, made under the row's id, as the one it
// has; one flush fewer per post is worth that rare repeat. (Discord
// remembers a nonce for a few minutes only: a database down for longer
// than that, right after a post, may see that post made twice.)
func (s *Store) MarkOutboxSent(ctx context.Context, id uuid.UUID, externalID string) (uuid.UUID, error) {
	var next uuid.UUID
	arg := dbsqlc.MarkOutboxSentParams{DeliveryID: id, ExternalID: nullString(externalID)}
	err := s.unflushedCommit(ctx, func(q *dbsqlc.Queries) (err error) {
		next, err = q.MarkOutboxSent(ctx, arg)
		return translate(err)
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("mark outbox sent: %w", translate(err))
	}
	return next, nil
}

// RetryOutbox releases the claim o was taken under, for the row to be
// tried again after the given delay (at once for 0), with the reason. It
// fails with thread.ErrDeliveryNotClaimable when that claim is gone: the
// row was sent meanwhile, or its claim lapsed and another sender holds it.
func (q *Queries) RetryOutbox(ctx context.Context, o *thread.Outbox, lastErr string, after time.Duration) error {
	n, err := q.gen.RetryOutbox(ctx, dbsqlc.RetryOutboxParams{
		DeliveryID: o.ID, Attempts: int32(o.Attempts), LastError: lastErr, AfterMs: after.Milliseconds(),
	})
	return claimEnded(o, n, err)
}

// FailOutbox gives up on a row after the last attempt, the claim o was
// taken under; like RetryOutbox it leaves a row whose claim is gone alone.
func (q *Queries) FailOutbox(ctx context.Context, o *thread.Outbox, lastErr string) error {
	n, err := q.gen.FailOutbox(ctx, dbsqlc.FailOutboxParams{DeliveryID: o.ID, Attempts: int32(o.Attempts), LastError: lastErr})
	return claimEnded(o, n, err)
}

// claimEnded reads the end of o's claim: the update is fenced by the claim
// (every claim counts an attempt, so the row's attempts name the claim that
// holds it), and n rows took it.
func claimEnded(o *thread.Outbox, n int64, err error) error {
	if err != nil {
		return fmt.Errorf("update outbox: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("update outbox %s: claim of attempt %d: %w", o.ID, o.Attempts, thread.ErrDeliveryNotClaimable)
	}
	return nil
}

// NextInLine returns the id of the first unsent row on o's surface after
// o: the row that waited for o. It fails with thread.ErrNotFound when there
// is none.
func (q *Queries) NextInLine(ctx context.Context, o *thread.Outbox) (uuid.UUID, error) {
	next, err := q.gen.NextInLine(ctx, dbsqlc.NextInLineParams{
		ThreadID: o.ThreadID, Platform: string(o.Platform), Target: o.Target, CreatedAt: o.CreatedAt, DeliveryID: o.ID,
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("next in line: %w", translate(err))
	}
	return next, nil
}

// ThreadOutbox lists a thread's outbox rows, oldest first.
func (q *Queries) ThreadOutbox(ctx context.Context, threadID uuid.UUID) ([]thread.Outbox, error) {
	rows, err := q.gen.ThreadOutbox(ctx, threadID)
	out, err := mapAll(rows, err, outboxOf)
	if err != nil {
		return nil, fmt.Errorf("thread outbox: %w", err)
	}
	return out, nil
}
