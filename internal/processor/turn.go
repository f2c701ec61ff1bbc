package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
)

// errLeaseLost cancels a turn whose lease another worker took (after this
// one stalled past the lease's TTL): the other worker carries on.
var errLeaseLost = errors.New("turn lease lost")

type turnWorker struct {
	river.WorkerDefaults[job.Turn]
	p *Processor
}

// Work runs one turn on the job's thread under the thread's lease. A thread
// busy with another turn is tried again shortly (that turn usually answers
// this input too, and then this one finds nothing to do).
func (w *turnWorker) Work(ctx context.Context, j *river.Job[job.Turn]) (err error) {
	p := w.p
	id := j.Args.ThreadID
	finished := p.observeTurn(id, j.ID)
	defer func() { finished(err) }() // first in, so it runs last: after the lease is released
	owner := fmt.Sprintf("%s/job-%d", p.id, j.ID)
	th, err := p.store.AcquireLease(ctx, id, owner, p.cfg.LeaseTTL)
	switch {
	case errors.Is(err, thread.ErrLeaseHeld):
		return river.JobSnooze(p.cfg.LeaseWait)
	case errors.Is(err, thread.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	defer func() {
		if rerr := p.store.ReleaseLease(context.WithoutCancel(ctx), id, owner); rerr != nil {
			p.logger.WarnContext(ctx, "release lease", slog.String("thread_id", id.String()), slog.Any("error", rerr))
		}
	}()
	defer func() {
		// A panic in a turn is a failed attempt like any other, so the
		// last attempt still records it on the thread.
		if r := recover(); r != nil {
			err = fmt.Errorf("turn panicked: %v", r)
		}
		if err != nil && j.Attempt >= j.MaxAttempts {
			p.logger.ErrorContext(ctx, "turn failed for good", slog.String("thread_id", id.String()), slog.Any("error", err))
			if ferr := p.failThread(context.WithoutCancel(ctx), id, "The turn kept failing and was given up."); ferr != nil {
				p.logger.ErrorContext(ctx, "record turn failure", slog.String("thread_id", id.String()), slog.Any("error", ferr))
			}
			err = river.JobCancel(err)
		}
	}()

	turnCtx, cancel := context.WithCancelCause(ctx)
	stopped := make(chan struct{})
	go p.heartbeat(turnCtx, cancel, stopped, id, owner)
	defer func() {
		cancel(nil)
		<-stopped // the heartbeat must not renew a lease released below
	}()

	store := &turnStore{p: p, owner: owner}
	chain, err := store.Chain(ctx, id)
	if err != nil {
		return err
	}
	if !agent.Pending(chain) {
		return nil
	}
	if th.Status != thread.StatusRunning {
		if th, err = p.store.SetStatus(ctx, id, thread.StatusChange{To: thread.StatusRunning}); err != nil {
			return err
		}
	}
	if p.runner == nil {
		return errors.New("processor: no agent runner on a worker replica")
	}
	if p.cfg.OnTurn != nil {
		defer p.cfg.OnTurn(turnCtx, id)()
	}
	err = p.runner.Turn(turnCtx, th, store, chain)
	switch cause := context.Cause(turnCtx); {
	case errors.Is(cause, thread.ErrAborted), errors.Is(cause, errLeaseLost):
		// Nothing more to do here: the abort recorded its own answer, or
		// another worker owns the thread now.
		p.logger.InfoContext(ctx, "turn stopped", slog.String("thread_id", id.String()), slog.String("cause", cause.Error()))
		return nil
	case errors.Is(err, thread.ErrAborted):
		return nil
	}
	return err
}

// NextRetry retries a failed turn soon: its input is waiting on it.
func (w *turnWorker) NextRetry(j *river.Job[job.Turn]) time.Time {
	return jittered(backoff(w.p.cfg.TurnBackoff, j.Attempt))
}

// heartbeat renews the lease until ctx ends, and cancels the turn when the
// thread is aborted or the lease is lost.
func (p *Processor) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, stopped chan<- struct{}, id uuid.UUID, owner string) {
	defer close(stopped)
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		status, err := p.store.RenewLease(ctx, id, owner, p.cfg.LeaseTTL)
		switch {
		case errors.Is(err, thread.ErrLeaseHeld):
			cancel(errLeaseLost)
			return
		case err != nil:
			if ctx.Err() == nil {
				p.logger.WarnContext(ctx, "renew lease", slog.String("thread_id", id.String()), slog.Any("error", err))
			}
		case status == thread.StatusAborted:
			cancel(thread.ErrAborted)
			return
		}
	}
}

// turnStore is the agent's view of the database during one turn.
type turnStore struct {
	p     *Processor
	owner string
}

var _ agent.Store = (*turnStore)(nil)

func (s *turnStore) Chain(ctx context.Context, threadID uuid.UUID) ([]thread.Stitch, error) {
	var all []thread.Stitch
	var after int64
	for {
		page, err := s.p.store.Stitches(ctx, threadID, db.StitchPage{After: after, Limit: db.MaxStitchPage})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < db.MaxStitchPage {
			return all, nil
		}
		after = page[len(page)-1].Seq
	}
}

// Record writes a step under the thread's row lock, and only while this
// turn still holds the lease and the thread is not aborted: once an abort
// commits, nothing more from this turn reaches the thread or a platform.
func (s *turnStore) Record(ctx context.Context, threadID uuid.UUID, e thread.Effects) error {
	return s.p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.LockThread(ctx, threadID)
		if err != nil {
			return err
		}
		if th.Status == thread.StatusAborted || th.LeaseOwner != s.owner {
			return thread.ErrAborted
		}
		// A turn that answered and found new input goes on running.
		if th.Status != thread.StatusRunning {
			if _, err := tx.SetStatus(ctx, threadID, thread.StatusChange{To: thread.StatusRunning}); err != nil {
				return err
			}
		}
		_, err = outbox.Write(ctx, tx, s.p.client, threadID, e)
		return err
	})
}

// failThread records that a thread's turns keep failing: an error stitch
// that sets its input aside, the error on its surface, and failed.
func (p *Processor) failThread(ctx context.Context, id uuid.UUID, msg string) error {
	return p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.LockThread(ctx, id)
		if err != nil {
			return err
		}
		e := thread.Effects{
			Stitches: []thread.Stitch{{Type: thread.StitchError, Content: msg, Metadata: thread.Meta{AnsweredThrough: th.StitchCount}.JSON()}},
			Outputs:  []thread.Output{{Kind: thread.OutboxError, OutboxBody: thread.OutboxBody{Text: msg}}},
		}
		if thread.CanTransition(th.Status, thread.StatusFailed) {
			e.Status = &thread.StatusChange{To: thread.StatusFailed, Error: msg}
		}
		_, err = outbox.Write(ctx, tx, p.client, id, e)
		return err
	})
}
