package db

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// TurnState is what a turn starts from: the thread, its whole chain, and
// the surface of its newest input (see InputSurface).
type TurnState struct {
	Thread   *thread.Thread
	Chain    []thread.Stitch
	Platform thread.Platform
	Target   string
	// Attached are the thread's live attachments, on every platform (the
	// input's surface among them): where echoes of the conversation go.
	Attached []thread.Surface
	// Org is the thread's organisation and the model and fast model it
	// chose (its Persona is not read: it went into the system prompt when
	// the thread was made). Empty for a thread with no input.
	Org thread.OrgSettings
}

// TurnState reads a thread's turn state in one round trip (more only for a
// chain longer than MaxStitchPage). The reads are not one snapshot: a
// stitch appended between them shows in the chain but not in the thread's
// head, which StartTurn then refuses as stale.
func (q *Queries) TurnState(ctx context.Context, threadID uuid.UUID) (*TurnState, error) {
	st := &TurnState{}
	var p pipeline
	p.add(func(q *dbsqlc.Queries) (err error) {
		st.Thread, err = threadOf(q.Thread(ctx, threadID))
		return err
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		st.Chain, err = stitchWindow(ctx, q, threadID, StitchPage{}, false)
		return err
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		r, err := q.InputSurface(ctx, threadID)
		st.Platform, st.Target, err = inputSurfaceOf(r, err)
		if err == nil {
			st.Attached = attachedOf(r)
			st.Org = thread.OrgSettings{Organisation: r.Organisation,
				Model:     thread.ModelRef{Provider: r.Provider, Name: r.Model},
				FastModel: thread.ModelRef{Provider: r.FastProvider, Name: r.FastModel}}
		}
		return err
	})
	if err := p.run(ctx, q.db); err != nil {
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

// StartTurn gives ts.Owner the thread's turn lease, in one statement and,
// when ts.Running, with the move to running. The lease, not a held
// connection or transaction, keeps one turn per thread across replicas: a
// turn spends most of its time waiting on an LLM. It fails with
// thread.ErrLeaseHeld while another owner holds a live lease, with
// thread.ErrConflict when the thread's status or head is no longer what the
// turn read (read it again), and with thread.ErrNotFound.
//
// The statement commits without waiting for its flush (as unflushedCommit's
// do, by a condition of its own): nothing outside the database acts on a
// lease alone. If a database crash
// forgets it, the turn's connection died with it, and its next step could
// not have been recorded anyway, since weft_hold_turn checks the lease.
func (s *Store) StartTurn(ctx context.Context, threadID uuid.UUID, ts TurnStart) (*thread.Thread, error) {
	if ts.Running && !thread.CanTransition(ts.Status, thread.StatusRunning) {
		return nil, fmt.Errorf("start turn: %w", &thread.TransitionError{From: ts.Status, To: thread.StatusRunning})
	}
	arg := dbsqlc.StartTurnParams{
		ThreadID: threadID, Owner: ts.Owner, TtlMs: ts.TTL.Milliseconds(),
		Status: string(ts.Status), HeadStitchID: nullUUID(ts.Head),
	}
	var t *thread.Thread
	var err error
	if ts.Running {
		t, err = threadOf(s.gen.StartTurnRunning(ctx, dbsqlc.StartTurnRunningParams(arg)))
	} else {
		t, err = threadOf(s.gen.StartTurn(ctx, arg))
	}
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, thread.ErrNotFound) {
		return nil, fmt.Errorf("start turn: %w", err)
	}
	// No row: say why, on the database's clock.
	held, err := s.gen.LeaseHeld(ctx, dbsqlc.LeaseHeldParams{ThreadID: threadID, Owner: ts.Owner})
	switch err = translate(err); {
	case err != nil:
		return nil, fmt.Errorf("start turn: %w", err)
	case held != nil && *held:
		return nil, fmt.Errorf("start turn on %s: %w", threadID, thread.ErrLeaseHeld)
	}
	return nil, fmt.Errorf("start turn on %s: %w: the thread changed since it was read", threadID, thread.ErrConflict)
}

// unflushedCommit runs one statement, step's, in a transaction of its own
// that commits without waiting for its WAL flush (synchronous_commit off,
// for that transaction only): the flush is most of a one-statement write's
// cost. Only for a fact whose loss in a database crash (not weft's: the
// commit is in the WAL buffer either way) costs nothing but a repeat: a
// lease (see StartTurn) or a sent mark (see MarkOutboxSent). Any later
// flushed commit flushes it before it.
func (s *Store) unflushedCommit(ctx context.Context, step func(q *dbsqlc.Queries) error) error {
	var p pipeline
	p.add(func(q *dbsqlc.Queries) error { return translate(q.SkipCommitFlush(ctx)) })
	p.add(step)
	return p.run(ctx, s.pool)
}

// RenewLease extends owner's lease and returns the thread's status. It
// fails with thread.ErrLeaseHeld when owner no longer holds the lease. Like
// StartTurn, it does not wait for its commit's flush.
func (s *Store) RenewLease(ctx context.Context, threadID uuid.UUID, owner string, ttl time.Duration) (thread.Status, error) {
	var status thread.Status
	arg := dbsqlc.RenewLeaseParams{ThreadID: threadID, Owner: owner, TtlMs: ttl.Milliseconds()}
	err := s.unflushedCommit(ctx, func(q *dbsqlc.Queries) error {
		st, err := q.RenewLease(ctx, arg)
		status = thread.Status(st)
		return translate(err)
	})
	if err != nil {
		if errors.Is(err, thread.ErrNotFound) {
			err = thread.ErrLeaseHeld
		}
		return "", fmt.Errorf("renew lease: %w", err)
	}
	return status, nil
}

// TurnLease is a running turn's hold on its thread: the thread and the
// lease's owner.
type TurnLease struct {
	ThreadID uuid.UUID
	Owner    string
}

// Heartbeat renews (for ttl) the leases of the turns in renew and then
// reads the status of the threads of all the turns in turns (renew among
// them), in one round trip: a replica's heartbeat for all its running
// turns, where a statement per turn would cost as many round trips a second
// as it has turns in flight. held has the thread's status for each turn
// that still holds its lease; a turn missing from it lost the lease, or its
// thread. renewed has the turns whose lease was renewed: a lease that a
// write (a step being recorded) held locked is skipped rather than waited
// for, to be renewed on another beat. Like RenewLease, it does not wait for
// its commit's flush.
func (s *Store) Heartbeat(ctx context.Context, turns, renew []TurnLease, ttl time.Duration) (held map[TurnLease]thread.Status, renewed map[TurnLease]bool, err error) {
	held, renewed = make(map[TurnLease]thread.Status, len(turns)), make(map[TurnLease]bool, len(renew))
	if len(turns) == 0 {
		return held, renewed, nil
	}
	args := func(ls []TurnLease) ([]uuid.UUID, []string) {
		ids, owners := make([]uuid.UUID, len(ls)), make([]string, len(ls))
		for i, l := range ls {
			ids[i], owners[i] = l.ThreadID, l.Owner
		}
		return ids, owners
	}
	var p pipeline
	if len(renew) > 0 {
		ids, owners := args(renew)
		p.add(func(q *dbsqlc.Queries) error { return translate(q.SkipCommitFlush(ctx)) })
		p.add(func(q *dbsqlc.Queries) error {
			rows, err := q.RenewLeases(ctx, dbsqlc.RenewLeasesParams{TtlMs: ttl.Milliseconds(), ThreadIds: ids, Owners: owners})
			for _, r := range rows {
				renewed[TurnLease{r.ThreadID, r.Owner}] = true
			}
			return translate(err)
		})
	}
	ids, owners := args(turns)
	p.add(func(q *dbsqlc.Queries) error {
		rows, err := q.TurnStatuses(ctx, dbsqlc.TurnStatusesParams{ThreadIds: ids, Owners: owners})
		for _, r := range rows {
			if r.Held {
				held[TurnLease{r.ThreadID, r.Owner}] = thread.Status(r.Status)
			}
		}
		return translate(err)
	})
	if err := p.run(ctx, s.pool); err != nil {
		return nil, nil, fmt.Errorf("heartbeat: %w", err)
	}
	return held, renewed, nil
}

// ReleaseLease gives up owner's lease, if it still holds it.
func (q *Queries) ReleaseLease(ctx context.Context, threadID uuid.UUID, owner string) error {
	err := q.gen.ReleaseLease(ctx, dbsqlc.ReleaseLeaseParams{ThreadID: threadID, Owner: owner})
	if err != nil {
		return fmt.Errorf("release lease: %w", translate(err))
	}
	return nil
}

// HandOverTurn gives up owner's lease, if it still holds it, on a thread
// whose turn a shutdown cut short: a running thread reads pending until
// another replica's turn takes it up, so nothing shows running where
// nothing runs. It undoes the turn's start rather than changes the status
// by the status machine, which lets no caller move running to pending.
func (q *Queries) HandOverTurn(ctx context.Context, threadID uuid.UUID, owner string) error {
	err := q.gen.HandOverTurn(ctx, dbsqlc.HandOverTurnParams{ThreadID: threadID, Owner: owner})
	if err != nil {
		return fmt.Errorf("hand over turn: %w", translate(err))
	}
	return nil
}

// LockThread locks a thread's row until the transaction ends and returns it.
// Writers of a turn's results take it first, so an abort (which takes it
// too) is ordered strictly before or after them.
func (q *Queries) LockThread(ctx context.Context, threadID uuid.UUID) (*thread.Thread, error) {
	t, err := threadOf(q.gen.LockThread(ctx, threadID))
	if err != nil {
		return nil, fmt.Errorf("lock thread: %w", err)
	}
	return t, nil
}

// LapsedThreads lists running threads whose turn lease lapsed, or that run
// without one, and that no live River job of kind (turns) will take up:
// the threads of a replica that died mid-turn, whose own job may still
// read running.
func (q *Queries) LapsedThreads(ctx context.Context, kind string, limit int) ([]uuid.UUID, error) {
	ids, err := q.gen.LapsedThreads(ctx, dbsqlc.LapsedThreadsParams{Kind: kind, OwnerJobSep: turnOwnerJob, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("lapsed threads: %w", translate(err))
	}
	return ids, nil
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
	rows, err := q.gen.StuckTurnJobs(ctx, dbsqlc.StuckTurnJobsParams{
		Kind: kind, GraceMs: grace.Milliseconds(), OwnerJobSep: turnOwnerJob, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("stuck turn jobs: %w", translate(err))
	}
	jobs := make([]StuckJob, len(rows))
	for i, r := range rows {
		jobs[i] = StuckJob(r)
	}
	return jobs, nil
}

// StrandedOutbox lists outbox rows that have been due for longer than
// grace and are first in line on their surface: their delivery job was lost
// (a crash between commit and pickup). A row waiting for an earlier post is
// woken by that post's end. Rows whose sender's claim lapsed are
// ReclaimLapsedOutbox's.
func (q *Queries) StrandedOutbox(ctx context.Context, grace time.Duration, limit int) ([]thread.Outbox, error) {
	rows, err := q.gen.StrandedOutbox(ctx, dbsqlc.StrandedOutboxParams{GraceMs: grace.Milliseconds(), MaxRows: int32(limit)})
	out, err := mapAll(rows, err, outboxOf)
	if err != nil {
		return nil, fmt.Errorf("stranded outbox: %w", err)
	}
	return out, nil
}
