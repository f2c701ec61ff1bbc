package db

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/internal/thread"
)

// TurnState is what a turn starts from: the thread, its whole chain, and
// the surface of its newest input (see InputSurface).
type TurnState struct {
	Thread   *thread.Thread
	Chain    []thread.Stitch
	Platform thread.Platform
	Target   string
}

// TurnState reads a thread's turn state in one round trip (more only for a
// chain longer than MaxStitchPage). The reads are not one snapshot: a
// stitch appended between them shows in the chain but not in the thread's
// head, which StartTurn then refuses as stale.
func (q *Queries) TurnState(ctx context.Context, threadID uuid.UUID) (*TurnState, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+threadColumns+` FROM threads WHERE thread_id = $1`, threadID)
	b.Queue(stitchWindowSQL("true", "ASC"), threadID, 0, 0, MaxStitchPage)
	b.Queue(inputSurfaceSQL, threadID)
	res := q.db.SendBatch(ctx, b)
	st, err := readTurnState(res)
	if cerr := res.Close(); err == nil && cerr != nil {
		err = translate(cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("turn state of %s: %w", threadID, err)
	}
	for n := len(st.Chain); n > 0 && n%MaxStitchPage == 0; n = len(st.Chain) {
		page, err := q.Stitches(ctx, threadID, StitchPage{After: st.Chain[n-1].Seq, Limit: MaxStitchPage})
		if err != nil {
			return nil, fmt.Errorf("turn state of %s: %w", threadID, err)
		}
		if len(page) == 0 {
			break
		}
		st.Chain = append(st.Chain, page...)
	}
	return st, nil
}

func readTurnState(res pgx.BatchResults) (*TurnState, error) {
	th, err := scanThread(res.QueryRow())
	if err != nil {
		return nil, err
	}
	st := &TurnState{Thread: th}
	rows, err := res.Query()
	if err != nil {
		return nil, translate(err)
	}
	if st.Chain, err = collect(rows, scanStitch); err != nil {
		return nil, err
	}
	if st.Platform, st.Target, err = scanInputSurface(res.QueryRow()); err != nil {
		return nil, err
	}
	return st, nil
}

// TurnStart is how a turn takes its thread's lease: as Owner, for TTL, on
// the thread as it read it (Status, and Head, the last stitch of its
// chain), moving it to running when Running is set.
type TurnStart struct {
	Owner   string
	TTL     time.Duration
	Status  thread.Status
	Head    uuid.UUID
	Running bool
}

// The lease is taken only from nobody, from the owner itself, or from an
// owner whose lease lapsed, and only on the thread as the turn read it.
const (
	startTurnSQL = `
	UPDATE threads SET lease_owner = $2, lease_expires_at = now() + $3 * interval '1 millisecond'
	WHERE thread_id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())
	  AND status = $4 AND head_stitch_id IS NOT DISTINCT FROM $5
	RETURNING ` + threadColumns
	// startTurnRunningSQL also moves the thread to running: $1–$6 are
	// setStatusArgs, then owner, TTL, status and head.
	startTurnRunningSQL = `
	UPDATE threads SET lease_owner = $7, lease_expires_at = now() + $8 * interval '1 millisecond',` + statusSet + `
	WHERE thread_id = $1 AND (lease_owner IS NULL OR lease_owner = $7 OR lease_expires_at < now())
	  AND status = $9 AND head_stitch_id IS NOT DISTINCT FROM $10 AND status = ANY($6)
	RETURNING ` + threadColumns
)

// StartTurn gives ts.Owner the thread's turn lease, in one statement and,
// when ts.Running, with the move to running. The lease, not a held
// connection or transaction, keeps one turn per thread across replicas: a
// turn spends most of its time waiting on an LLM. It fails with
// thread.ErrLeaseHeld while another owner holds a live lease, with
// thread.ErrConflict when the thread's status or head is no longer what the
// turn read (read it again), and with thread.ErrNotFound.
//
// The statement commits without waiting for its flush (see unflushedCommit):
// nothing outside the database acts on a lease alone. If a database crash
// forgets it, the turn's connection died with it, and its next step could
// not have been recorded anyway, since weft_hold_turn checks the lease.
func (s *Store) StartTurn(ctx context.Context, threadID uuid.UUID, ts TurnStart) (*thread.Thread, error) {
	sql, args := startTurnSQL, []any{threadID, ts.Owner, ts.TTL.Milliseconds(), ts.Status, nullUUID(ts.Head)}
	if ts.Running {
		if !thread.CanTransition(ts.Status, thread.StatusRunning) {
			return nil, fmt.Errorf("start turn: %w", &thread.TransitionError{From: ts.Status, To: thread.StatusRunning})
		}
		sql = startTurnRunningSQL
		args = append(setStatusArgs(threadID, thread.StatusChange{To: thread.StatusRunning}), args[1:]...)
	}
	var t *thread.Thread
	err := s.unflushedCommit(ctx, sql, args, func(r pgx.Row) (err error) {
		t, err = scanThread(r)
		return err
	})
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, thread.ErrNotFound) {
		return nil, fmt.Errorf("start turn: %w", err)
	}
	// No row: say why, on the database's clock.
	var held bool
	err = s.db.QueryRow(ctx, `SELECT lease_owner IS NOT NULL AND lease_owner <> $2 AND lease_expires_at >= now()
		FROM threads WHERE thread_id = $1`, threadID, ts.Owner).Scan(&held)
	switch err = translate(err); {
	case err != nil:
		return nil, fmt.Errorf("start turn: %w", err)
	case held:
		return nil, fmt.Errorf("start turn on %s: %w", threadID, thread.ErrLeaseHeld)
	}
	return nil, fmt.Errorf("start turn on %s: %w: the thread changed since it was read", threadID, thread.ErrConflict)
}

// unflushedCommit runs one statement, read by scan, in a transaction of
// its own that commits without waiting for its WAL flush
// (synchronous_commit off, for that transaction only): the flush is most
// of a one-statement write's cost. Only for a fact whose loss in a
// database crash (not weft's: the commit is in the WAL buffer either way)
// costs nothing but a repeat: a lease (see StartTurn) or a sent mark (see
// MarkOutboxSent). Any later flushed commit flushes it before it.
func (s *Store) unflushedCommit(ctx context.Context, sql string, args []any, scan func(pgx.Row) error) error {
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
	b.Queue(sql, args...)
	res := s.pool.SendBatch(ctx, b)
	_, err := res.Exec()
	if err == nil {
		err = scan(res.QueryRow())
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return translate(err)
}

// RenewLease extends owner's lease and returns the thread's status. It
// fails with thread.ErrLeaseHeld when owner no longer holds the lease. Like
// StartTurn, it does not wait for its commit's flush.
func (s *Store) RenewLease(ctx context.Context, threadID uuid.UUID, owner string, ttl time.Duration) (thread.Status, error) {
	var status thread.Status
	err := s.unflushedCommit(ctx, `
		UPDATE threads SET lease_expires_at = now() + $3 * interval '1 millisecond'
		WHERE thread_id = $1 AND lease_owner = $2
		RETURNING status`, []any{threadID, owner, ttl.Milliseconds()}, func(r pgx.Row) error { return r.Scan(&status) })
	if err != nil {
		if errors.Is(err, thread.ErrNotFound) {
			err = thread.ErrLeaseHeld
		}
		return "", fmt.Errorf("renew lease: %w", err)
	}
	return status, nil
}

// TurnStatus returns the thread's status while owner holds its lease, and
// fails with thread.ErrLeaseHeld once it does not: a running turn's look
// for an abort, which writes nothing.
func (q *Queries) TurnStatus(ctx context.Context, threadID uuid.UUID, owner string) (thread.Status, error) {
	var status thread.Status
	var held bool
	err := q.db.QueryRow(ctx, `SELECT status, lease_owner IS NOT DISTINCT FROM $2 FROM threads WHERE thread_id = $1`,
		threadID, owner).Scan(&status, &held)
	switch {
	case err != nil:
		return "", fmt.Errorf("turn status: %w", translate(err))
	case !held:
		return "", fmt.Errorf("turn status of %s: %w", threadID, thread.ErrLeaseHeld)
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

// StuckJob is a River job left running, and the thread its args name.
type StuckJob struct {
	JobID    int64
	ThreadID uuid.UUID
}

// TurnOwner names the holder of a thread's lease: a replica's turn job.
// StuckTurnJobs reads the job back out of it (turnOwnerJob).
func TurnOwner(replica string, jobID int64) string {
	return replica + turnOwnerJob + strconv.FormatInt(jobID, 10)
}

// turnOwnerJob comes between the replica and the job id in a TurnOwner.
const turnOwnerJob = "/job-"

// StuckTurnJobs lists River jobs of kind (turn jobs, whose args name a
// thread_id) running for longer than grace without ever holding their
// thread's lease, while no other turn holds it, and not yet marked for
// cancelling: jobs of a replica that died before its turn took the lease.
// A live turn takes it within milliseconds, so grace need only outlast
// those; a job that took the lease is LapsedThreads' once it lapses, and
// may yet renew it. River's JobCancel marks a running job by its
// metadata's cancel_attempted_at, and its rescuer then cancels the job.
func (q *Queries) StuckTurnJobs(ctx context.Context, kind string, grace time.Duration, limit int) ([]StuckJob, error) {
	rows, err := q.db.Query(ctx, `SELECT j.id, t.thread_id FROM river_job j
		JOIN threads t ON t.thread_id = (j.args->>'thread_id')::uuid
		WHERE j.state = 'running' AND j.kind = $1
		  AND j.attempted_at < now() - $2 * interval '1 millisecond'
		  AND NOT j.metadata ? 'cancel_attempted_at'
		  AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
		  AND (t.lease_owner IS NULL OR t.lease_owner NOT LIKE ('%' || $4::text || j.id))
		ORDER BY j.id LIMIT $3`, kind, grace.Milliseconds(), limit, turnOwnerJob)
	if err != nil {
		return nil, fmt.Errorf("stuck turn jobs: %w", translate(err))
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[StuckJob])
	if err != nil {
		return nil, fmt.Errorf("stuck turn jobs: %w", translate(err))
	}
	return jobs, nil
}

// StrandedOutbox lists outbox rows that have been due for longer than
// grace: their delivery job was lost (a crash between commit and pickup).
// Rows whose sender's claim lapsed are ReclaimLapsedOutbox's.
func (q *Queries) StrandedOutbox(ctx context.Context, grace time.Duration, limit int) ([]thread.Outbox, error) {
	rows, err := q.db.Query(ctx, `SELECT `+outboxColumns+` FROM platform_deliveries
		WHERE status = 'pending' AND next_attempt_at < now() - $1 * interval '1 millisecond'
		ORDER BY next_attempt_at LIMIT $2`, grace.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("stranded outbox: %w", translate(err))
	}
	return collectOutbox(rows)
}
