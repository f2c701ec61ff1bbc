package db

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

const outboxColumns = `delivery_id, thread_id, stitch_id, platform, target, kind, body, status, attempts,
	next_attempt_at, last_error, external_id, created_at, sent_at`

func scanOutbox(row pgx.Row) (*thread.Outbox, error) {
	var (
		o                 thread.Outbox
		stitch            pgtype.UUID
		lastErr, external pgtype.Text
		sentAt            pgtype.Timestamptz
	)
	err := row.Scan(&o.ID, &o.ThreadID, &stitch, &o.Platform, &o.Target, &o.Kind, &o.Body, &o.Status, &o.Attempts,
		&o.NextAttemptAt, &lastErr, &external, &o.CreatedAt, &sentAt)
	if err != nil {
		return nil, translate(err)
	}
	o.StitchID, o.LastError, o.ExternalID, o.SentAt = uid(stitch), str(lastErr), str(external), tm(sentAt)
	return &o, nil
}

const insertOutboxSQL = `
	INSERT INTO platform_deliveries (delivery_id, thread_id, stitch_id, platform, target, kind, body)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	RETURNING ` + outboxColumns

func insertOutboxArgs(o thread.Outbox) []any {
	return []any{o.ID, o.ThreadID, nullUUID(o.StitchID), o.Platform, o.Target, o.Kind, o.Body}
}

// insertSendingOutboxSQL inserts a row already claimed for $8 ms, its first
// attempt counted (see Write.SendingFor).
const insertSendingOutboxSQL = `
	INSERT INTO platform_deliveries (delivery_id, thread_id, stitch_id, platform, target, kind, body,
		status, attempts, claimed_until)
	VALUES ($1, $2, $3, $4, $5, $6, $7, 'sending', 1, now() + $8 * interval '1 millisecond')
	RETURNING ` + outboxColumns

// InsertOutbox queues a message for a platform. Call it in the transaction
// that writes the stitch it comes from.
func (q *Queries) InsertOutbox(ctx context.Context, o thread.Outbox) (*thread.Outbox, error) {
	if o.ID == uuid.Nil {
		o.ID = thread.NewID()
	}
	out, err := scanOutbox(q.db.QueryRow(ctx, insertOutboxSQL, insertOutboxArgs(o)...))
	if err != nil {
		return nil, fmt.Errorf("insert outbox: %w", err)
	}
	return out, nil
}

// Outbox returns one outbox row.
func (q *Queries) Outbox(ctx context.Context, id uuid.UUID) (*thread.Outbox, error) {
	o, err := scanOutbox(q.db.QueryRow(ctx, `SELECT `+outboxColumns+` FROM platform_deliveries WHERE delivery_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get outbox %s: %w", id, err)
	}
	return o, nil
}

// firstInLine holds for an outbox row p with no unfinished row before it on
// the same surface: a thread's posts reach a platform in the order they were
// written, even when an earlier one needs retries.
const firstInLine = `NOT EXISTS (
	SELECT 1 FROM platform_deliveries e
	WHERE e.thread_id = p.thread_id AND e.platform = p.platform AND e.target = p.target
	  AND e.status IN ('pending', 'sending') AND (e.created_at, e.delivery_id) < (p.created_at, p.delivery_id))`

// ClaimOutbox takes one outbox row for sending, for lease: it must be due,
// first in line on its surface, and either pending or claimed by a sender
// whose claim lapsed (a crash). It fails with thread.ErrDeliveryNotClaimable
// otherwise, returning the row as it stands so the caller can tell why
// without reading it again, and with thread.ErrNotFound for an unknown id.
// Each claim counts an attempt.
func (q *Queries) ClaimOutbox(ctx context.Context, id uuid.UUID, lease time.Duration) (*thread.Outbox, error) {
	o, err := scanOutbox(q.db.QueryRow(ctx, `
		UPDATE platform_deliveries p SET status = 'sending', attempts = attempts + 1,
			claimed_until = now() + $2 * interval '1 millisecond', updated_at = now()
		WHERE delivery_id = $1 AND next_attempt_at <= now()
		  AND (status = 'pending' OR (status = 'sending' AND claimed_until < now()))
		  AND `+firstInLine+`
		RETURNING `+prefixed("p.", outboxColumns), id, lease.Milliseconds()))
	if err == nil {
		return o, nil
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
	rows, err := q.db.Query(ctx, `
		WITH lapsed AS (
			SELECT delivery_id FROM platform_deliveries
			WHERE status = 'sending' AND claimed_until < now()
			ORDER BY next_attempt_at
			LIMIT $1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE platform_deliveries p SET status = 'pending', claimed_until = NULL,
			next_attempt_at = now(), updated_at = now()
		FROM lapsed WHERE p.delivery_id = lapsed.delivery_id
		RETURNING `+prefixed("p.", outboxColumns), limit)
	if err != nil {
		return nil, fmt.Errorf("reclaim lapsed outbox: %w", translate(err))
	}
	return collectOutbox(rows)
}

func collectOutbox(rows pgx.Rows) ([]thread.Outbox, error) { return collect(rows, scanOutbox) }

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
	var next pgtype.UUID
	err := s.unflushedCommit(ctx, `
		WITH o AS (
			UPDATE platform_deliveries SET status = 'sent', external_id = $2, sent_at = now(),
				claimed_until = NULL, last_error = NULL, updated_at = now()
			WHERE delivery_id = $1
			RETURNING thread_id, platform, target, created_at, delivery_id
		)
		SELECT (`+nextInLineSQL+`) FROM o`, []any{id, nullString(externalID)}, func(r pgx.Row) error { return r.Scan(&next) })
	if err != nil {
		return uuid.Nil, fmt.Errorf("mark outbox sent: %w", translate(err))
	}
	return uid(next), nil
}

// nextInLineSQL selects the first unsent row after row o on o's surface.
const nextInLineSQL = `
	SELECT n.delivery_id FROM platform_deliveries n
	WHERE n.thread_id = o.thread_id AND n.platform = o.platform AND n.target = o.target AND n.status = 'pending'
	  AND (n.created_at, n.delivery_id) > (o.created_at, o.delivery_id)
	ORDER BY n.created_at, n.delivery_id LIMIT 1`

// RetryOutbox releases the claim o was taken under, for the row to be
// tried again after the given delay (at once for 0), with the reason. It
// fails with thread.ErrDeliveryNotClaimable when that claim is gone: the
// row was sent meanwhile, or its claim lapsed and another sender holds it.
func (q *Queries) RetryOutbox(ctx context.Context, o *thread.Outbox, lastErr string, after time.Duration) error {
	return q.finishOutbox(ctx, o, `UPDATE platform_deliveries SET status = 'pending', last_error = $3,
		next_attempt_at = now() + $4 * interval '1 millisecond', claimed_until = NULL, updated_at = now()
		WHERE delivery_id = $1 AND status = 'sending' AND attempts = $2`, lastErr, after.Milliseconds())
}

// FailOutbox gives up on a row after the last attempt, the claim o was
// taken under; like RetryOutbox it leaves a row whose claim is gone alone.
func (q *Queries) FailOutbox(ctx context.Context, o *thread.Outbox, lastErr string) error {
	return q.finishOutbox(ctx, o, `UPDATE platform_deliveries SET status = 'failed', last_error = $3,
		claimed_until = NULL, updated_at = now()
		WHERE delivery_id = $1 AND status = 'sending' AND attempts = $2`, lastErr)
}

// finishOutbox runs sql, fenced by o's claim: every claim counts an
// attempt, so the row's attempts name the claim that holds it.
func (q *Queries) finishOutbox(ctx context.Context, o *thread.Outbox, sql string, args ...any) error {
	tag, err := q.db.Exec(ctx, sql, append([]any{o.ID, o.Attempts}, args...)...)
	if err != nil {
		return fmt.Errorf("update outbox: %w", translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("update outbox %s: claim of attempt %d: %w", o.ID, o.Attempts, thread.ErrDeliveryNotClaimable)
	}
	return nil
}

// NextInLine returns the id of the first unsent row on o's surface after
// o: the row that waited for o. It fails with thread.ErrNotFound when there
// is none.
func (q *Queries) NextInLine(ctx context.Context, o *thread.Outbox) (uuid.UUID, error) {
	var next pgtype.UUID
	err := q.db.QueryRow(ctx, `
		WITH o (thread_id, platform, target, created_at, delivery_id) AS (
			VALUES ($1::uuid, $2::text, $3::text, $4::timestamptz, $5::uuid))
		SELECT (`+nextInLineSQL+`) FROM o`, o.ThreadID, o.Platform, o.Target, o.CreatedAt, o.ID).Scan(&next)
	if err != nil {
		return uuid.Nil, fmt.Errorf("next in line: %w", translate(err))
	}
	if !next.Valid {
		return uuid.Nil, fmt.Errorf("next in line: %w", thread.ErrNotFound)
	}
	return next.Bytes, nil
}

// ThreadOutbox lists a thread's outbox rows, oldest first.
func (q *Queries) ThreadOutbox(ctx context.Context, threadID uuid.UUID) ([]thread.Outbox, error) {
	rows, err := q.db.Query(ctx, `SELECT `+outboxColumns+` FROM platform_deliveries
		WHERE thread_id = $1 ORDER BY created_at, delivery_id`, threadID)
	if err != nil {
		return nil, fmt.Errorf("thread outbox: %w", translate(err))
	}
	return collectOutbox(rows)
}
