package db

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// AcquireLease gives owner the thread's turn lease for ttl, if nobody else
// holds a live one; otherwise it fails with thread.ErrLeaseHeld. Taking the
// lease again as its owner renews it. The lease, not a held connection or
// transaction, keeps one turn per thread across replicas: a turn spends most
// of its time waiting on an LLM.
func (q *Queries) AcquireLease(ctx context.Context, threadID uuid.UUID, owner string, ttl time.Duration) (*thread.Thread, error) {
	t, err := scanThread(q.db.QueryRow(ctx, `
		UPDATE threads SET lease_owner = $2, lease_expires_at = now() + $3 * interval '1 millisecond'
		WHERE thread_id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())
		RETURNING `+threadColumns, threadID, owner, ttl.Milliseconds()))
	if err == nil {
		return t, nil
	}
	if _, gerr := q.Thread(ctx, threadID); gerr != nil {
		return nil, fmt.Errorf("acquire lease: %w", gerr)
	}
	return nil, fmt.Errorf("acquire lease on %s: %w", threadID, thread.ErrLeaseHeld)
}

// RenewLease extends owner's lease and returns the thread's status, so the
// heartbeat that keeps a turn's lease also notices an abort. It fails with
// thread.ErrLeaseHeld when owner no longer holds the lease.
func (q *Queries) RenewLease(ctx context.Context, threadID uuid.UUID, owner string, ttl time.Duration) (thread.Status, error) {
	var status thread.Status
	err := q.db.QueryRow(ctx, `
		UPDATE threads SET lease_expires_at = now() + $3 * interval '1 millisecond'
		WHERE thread_id = $1 AND lease_owner = $2
		RETURNING status`, threadID, owner, ttl.Milliseconds()).Scan(&status)
	if err != nil {
		err = translate(err)
		if err == thread.ErrNotFound {
			err = thread.ErrLeaseHeld
		}
		return "", fmt.Errorf("renew lease: %w", err)
	}
	return status, nil
}

// ReleaseLease gives up owner's lease, if it still holds it.
func (q *Queries) ReleaseLease(ctx context.Context, threadID uuid.UUID, owner string) error {
	_, err := q.db.Exec(ctx, `UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL
		WHERE thread_id = $1 AND lease_owner = $2`, threadID, owner)
	if err != nil {
		return fmt.Errorf("release lease: %w", translate(err))
	}
	return nil
}

// LockThread locks a thread's row until the transaction ends and returns it.
// Writers of a turn's results take it first, so an abort (which takes it
// too) is ordered strictly before or after them.
func (q *Queries) LockThread(ctx context.Context, threadID uuid.UUID) (*thread.Thread, error) {
	t, err := scanThread(q.db.QueryRow(ctx, `SELECT `+threadColumns+` FROM threads WHERE thread_id = $1 FOR UPDATE`, threadID))
	if err != nil {
		return nil, fmt.Errorf("lock thread: %w", err)
	}
	return t, nil
}

// LapsedThreads lists running threads whose turn lease lapsed, or that run
// without one: the threads of a replica that died mid-turn.
func (q *Queries) LapsedThreads(ctx context.Context, limit int) ([]uuid.UUID, error) {
	rows, err := q.db.Query(ctx, `SELECT thread_id FROM threads
		WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now())
		ORDER BY last_activity_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("lapsed threads: %w", translate(err))
	}
	return collectIDs(rows)
}

// StrandedOutbox lists outbox rows that should have been sent by now and
// were not: due for longer than grace, or claimed by a sender whose claim
// lapsed. Their delivery job was lost (a crash between commit and pickup).
func (q *Queries) StrandedOutbox(ctx context.Context, grace time.Duration, limit int) ([]thread.Outbox, error) {
	rows, err := q.db.Query(ctx, `SELECT `+outboxColumns+` FROM platform_deliveries
		WHERE (status = 'pending' AND next_attempt_at < now() - $1 * interval '1 millisecond')
		   OR (status = 'sending' AND claimed_until < now())
		ORDER BY next_attempt_at LIMIT $2`, grace.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("stranded outbox: %w", translate(err))
	}
	return collectOutbox(rows)
}
