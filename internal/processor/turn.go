package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/logging"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// errLeaseLost cancels a turn whose lease another worker took (after this
// one stalled past the lease's TTL): the other worker carries on.
var errLeaseLost = errors.New("turn lease lost")

// gateWait bounds a turn's wait for its slot (Config.Gate): well under
// stuckTurnGrace, after which the sweep cancels a job that never took its
// thread's lease.
const gateWait = 20 * time.Second

type turnWorker struct {
	river.WorkerDefaults[job.Turn]
	p *Processor
}

// Work runs one turn on the job's thread under the thread's lease. It
// reads the thread first and takes the lease only when there is input to
// answer; a thread busy with another turn is tried again when that turn's
// lease would lapse (see leaseWait): that turn answers this input too,
// unless its replica dies, and then this one finds nothing to do.
func (w *turnWorker) Work(ctx context.Context, j *river.Job[job.Turn]) (err error) {
	p := w.p
	id := j.Args.ThreadID
	ctx = logging.With(ctx, slog.String("thread_id", id.String()), slog.Int64("job_id", j.ID))
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("weft.thread_id", id.String()))
	if g := p.cfg.Gate; g != nil {
		// A job waiting longer goes back to the queue, for this replica or
		// another, well before the sweep would take it for stuck.
		gctx, cancel := context.WithTimeout(ctx, gateWait)
		release, err := g.Acquire(gctx)
		cancel()
		if err != nil {
			return river.JobSnooze(p.cfg.LeaseWait)
		}
		defer release()
	}
	finished := p.observeTurn(id, j.ID)
	defer func() { finished(err) }() // first in, so it runs last: after the lease is released
	store := &turnStore{p: p, owner: db.TurnOwner(p.id, j.ID)}
	th, chain, err := store.start(ctx, id)
	switch {
	case errors.Is(err, thread.ErrLeaseHeld):
		p.cfg.Metrics.Turn(metrics.TurnBusy)
		return river.JobSnooze(p.leaseWait(store.heldUntil))
	case errors.Is(err, thread.ErrNotFound):
		p.cfg.Metrics.Turn(metrics.TurnIdle)
		return nil
	case err != nil:
		p.cfg.Metrics.Turn(metrics.TurnError)
		return err
	case th == nil:
		p.cfg.Metrics.Turn(metrics.TurnIdle)
		return nil // nothing to answer: nothing was written
	}
	started := time.Now()
	outcome := metrics.TurnAnswered
	defer func() {
		if err != nil && outcome == metrics.TurnAnswered {
			outcome = metrics.TurnError
		}
		p.cfg.Metrics.TurnRan(outcome, time.Since(started), store.steps)
	}()
	defer func() {
		if store.released {
			return
		}
		if err != nil && p.cancelling.Load() {
			if herr := p.handTurnOver(context.WithoutCancel(ctx), id, store.owner); herr != nil {
				p.logger.WarnContext(ctx, "hand turn over", slog.String("thread_id", id.String()), slog.Any("error", herr))
			} else {
				err, outcome = nil, metrics.TurnStopped
				return
			}
		}
		if rerr := p.store.ReleaseLease(context.WithoutCancel(ctx), id, store.owner); rerr != nil {
			p.logger.WarnContext(ctx, "release lease", slog.String("thread_id", id.String()), slog.Any("error", rerr))
		}
	}()
	defer func() {
		// A panic in a turn is a failed attempt like any other, so the
		// last attempt still records it on the thread.
		if r := recover(); r != nil {
			err = fmt.Errorf("turn panicked: %v", r)
		}
		// A job cancelled remotely (the sweep took it for dead, or an
		// operator stopped it) is not the thread's failure.
		// Nor is a turn this replica's shutdown cut short, nor a snooze
		// (River does not count it as an attempt).
		var snooze *rivertype.JobSnoozeError
		if err != nil && j.Attempt >= j.MaxAttempts && !errors.As(err, &snooze) && !errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely) && !p.cancelling.Load() {
			p.logger.ErrorContext(ctx, "turn failed for good", slog.String("thread_id", id.String()), slog.Any("error", err))
			if ferr := p.failThread(context.WithoutCancel(ctx), id, "The turn kept failing and was given up."); ferr != nil {
				p.logger.ErrorContext(ctx, "record turn failure", slog.String("thread_id", id.String()), slog.Any("error", ferr))
			}
			err = river.JobCancel(err)
			outcome = metrics.TurnGaveUp
		}
	}()

	turnCtx, cancel := context.WithCancelCause(ctx)
	leave := p.heartbeat.join(id, store.owner, cancel)
	defer func() {
		cancel(nil)
		leave() // the heartbeat must not renew a lease released below
	}()

	if p.runner == nil {
		return errors.New("processor: no agent runner on a worker replica")
	}
	if p.cfg.OnTurn != nil {
		defer p.cfg.OnTurn(turnCtx, id)()
	}
	// The organisation's model, fast model and tools, read with the thread.
	err = p.runner.Turn(agent.WithOrg(turnCtx, store.org), th, store, chain)
	switch cause := context.Cause(turnCtx); {
	case errors.Is(cause, thread.ErrAborted), errors.Is(cause, errLeaseLost):
		// Nothing more to do here: the abort recorded its own answer, or
		// another worker owns the thread now.
		p.logger.InfoContext(ctx, "turn stopped", slog.String("thread_id", id.String()), slog.String("cause", cause.Error()))
		outcome = metrics.TurnStopped
		return nil
	case errors.Is(err, thread.ErrAborted):
		outcome = metrics.TurnStopped
		return nil
	}
	var un *agent.Unavailable
	if errors.As(err, &un) {
		cancel(nil)
		leave() // the heartbeat must not shorten the lease kept below
		outcome = metrics.TurnWaiting
		return p.waitOut(ctx, j, store, un)
	}
	return err
}

// maxLeaseWait caps a busy thread's wait: River makes a job snoozed for
// no longer than its scheduler's interval (5 s) available at once, and
// leaves a longer snooze to the leader's scheduler, which a leader that
// died with the lease's holder no longer runs.
const maxLeaseWait = 5 * time.Second

// leaseWait is how long a turn job that found its thread's lease held
// until until waits before it looks again: till the lease would lapse,
// when a dead holder's thread is to be taken over, between LeaseWait and
// maxLeaseWait. Sooner would find the lease held again: a live holder
// answers input that arrives meanwhile itself (its last step does not
// settle over it), and one waiting out a model outage holds the lease for
// the whole wait.
func (p *Processor) leaseWait(until time.Time) time.Duration {
	return max(p.cfg.LeaseWait, min(time.Until(until), maxLeaseWait))
}

// snoozeLeaseGrace is how long a waiting turn's lease outlives its snooze:
// River's scheduler makes a snoozed job available within 5 s of its time,
// and until it runs the sweep must not take the thread for abandoned.
const snoozeLeaseGrace = 5 * time.Second

// waitOut gives the worker up while the model is unavailable: the job is
// snoozed (River counts no attempt for a snooze) for the server's hint or
// the backoff, never past the retry window, and the thread keeps its lease
// until the job runs again, on this replica (the same owner takes it on) or
// once it lapses, on another.
func (p *Processor) waitOut(ctx context.Context, j *river.Job[job.Turn], store *turnStore, un *agent.Unavailable) error {
	d := un.RetryAfter
	if d <= 0 {
		d = backoff(p.cfg.TurnBackoff).Jittered(snoozes(j) + 1)
	}
	d = max(0, min(d, maxModelWait, time.Until(un.Until)))
	p.logger.InfoContext(ctx, "model unavailable, retrying", slog.Duration("in", d), slog.Any("error", un.Err))
	if _, err := p.store.RenewLease(context.WithoutCancel(ctx), j.Args.ThreadID, store.owner, d+snoozeLeaseGrace); err == nil {
		store.released = true // kept on purpose: the lease lapses by itself
	}
	return river.JobSnooze(d)
}

// maxModelWait caps one wait for an unavailable model.
const maxModelWait = time.Minute

// snoozes is how often River has snoozed the job, from its metadata.
func snoozes(j *river.Job[job.Turn]) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(j.Metadata, &m) // River writes it; absent is 0
	return m.Snoozes
}

// Timeout lets a turn wait on several slow model calls; see
// Config.TurnTimeout.
func (w *turnWorker) Timeout(*river.Job[job.Turn]) time.Duration { return w.p.cfg.TurnTimeout }

// NextRetry retries a failed turn soon: its input is waiting on it.
func (w *turnWorker) NextRetry(j *river.Job[job.Turn]) time.Time {
	return time.Now().Add(backoff(w.p.cfg.TurnBackoff).Jittered(j.Attempt))
}

// turnStore is the agent's view of the database during one turn: it holds
// the thread's lease and knows the chain as the turn last saw it.
type turnStore struct {
	p     *Processor
	owner string
	// count is the chain's length as the turn knows it, and surface where
	// its newest input came from.
	count   int64
	surface *outbox.Surface
	// attached are the thread's live attachments, where echoes go.
	attached []thread.Surface
	// org is the thread's organisation and its agent settings.
	org thread.OrgSettings
	// released is set once a step's write gave the lease up.
	released bool
	// heldUntil is when the lease that another turn held, as start read
	// it, lapses.
	heldUntil time.Time
	// steps counts the model calls the turn recorded.
	steps int
}

var _ agent.Store = (*turnStore)(nil)

// maxStartReads bounds how often a turn reads its thread again because it
// changed between the read and taking the lease (input kept arriving).
const maxStartReads = 5

// start reads the thread and, when its chain has input to answer, takes
// its lease (or renews its own), moving it to running, and returns it with
// its chain. With nothing to answer, it writes nothing and returns a nil
// thread and the chain.
func (s *turnStore) start(ctx context.Context, id uuid.UUID) (*thread.Thread, []thread.Stitch, error) {
	for reads := 1; ; reads++ {
		st, err := s.p.store.TurnState(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if !agent.Pending(st.Chain) {
			return nil, st.Chain, nil
		}
		ts := db.TurnStart{Owner: s.owner, TTL: s.p.cfg.LeaseTTL, Status: st.Thread.Status,
			Head: st.Chain[len(st.Chain)-1].ID, Running: st.Thread.Status != thread.StatusRunning}
		th, err := s.p.store.StartTurn(ctx, id, ts)
		if errors.Is(err, thread.ErrConflict) && !errors.Is(err, thread.ErrLeaseHeld) && reads < maxStartReads {
			continue
		}
		if errors.Is(err, thread.ErrLeaseHeld) {
			s.heldUntil = st.Thread.LeaseExpires
		}
		if err != nil {
			return nil, nil, err
		}
		s.saw(st)
		return th, st.Chain, nil
	}
}

func (s *turnStore) saw(st *db.TurnState) {
	s.count = int64(len(st.Chain))
	s.surface = outbox.SurfaceOf(st.Platform, st.Target)
	s.attached = st.Attached
	s.org = st.Org
}

// Record writes a step in one round trip (one transaction more when it has
// posts to enqueue), and only while this turn still holds the lease and the
// thread is not aborted: once an abort commits, nothing more from this turn
// reaches the thread or a platform. The turn's last step gives the lease up
// in the same write, unless input arrived that the turn has not seen: then
// the thread is running again and the chain read anew.
func (s *turnStore) Record(ctx context.Context, threadID uuid.UUID, chain []thread.Stitch, e thread.Effects, last bool) ([]thread.Stitch, error) {
	for i, st := range e.Stitches {
		if st.Type == thread.StitchLLMCall {
			s.steps++
		}
		e.Stitches[i].Metadata = tracing.Stamp(ctx, st.Metadata)
	}
	w := outbox.Plan(threadID, s.surface, e)
	w.Turn = &db.TurnHold{Owner: s.owner, Release: last, Count: s.count + int64(len(w.Stitches))}
	// The thread's other surfaces hear of the answer in the same write:
	// an echo is committed with the answer, or not at all.
	echoes, jobs := s.p.cfg.Echo.Mirror(s.surface, s.attached, chain, w, e, w.Turn.Count)
	w.Outbox = append(w.Outbox, echoes...)
	got, err := outbox.Commit(ctx, s.p.store, s.p.client, w, jobs...)
	if err != nil {
		return nil, err
	}
	s.released = got.Released
	if len(got.Stitches) > 0 && got.Stitches[0].Seq == s.count+1 && (got.Released || !last) {
		// Nothing else was appended: the chain is what the turn wrote.
		s.count += int64(len(got.Stitches))
		return append(chain, got.Stitches...), nil
	}
	if last {
		// The step settled the thread, but input arrived meanwhile: the
		// thread runs on, under the lease this turn still holds.
		_, chain, err := s.start(ctx, threadID)
		if errors.Is(err, thread.ErrLeaseHeld) {
			err = fmt.Errorf("%w: %w", thread.ErrAborted, err)
		}
		return chain, err
	}
	st, err := s.p.store.TurnState(ctx, threadID)
	if err != nil {
		return nil, err
	}
	s.saw(st)
	return st.Chain, nil
}

// handTurnOver gives up owner's lease on a thread whose turn this
// replica's shutdown cut short, the thread pending again, with a turn job
// due at once, in one transaction: another replica takes the thread up
// now, from its chain.
func (p *Processor) handTurnOver(ctx context.Context, id uuid.UUID, owner string) error {
	return p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if err := tx.HandOverTurn(ctx, id, owner); err != nil {
			return err
		}
		return job.InsertTx(ctx, p.client, tx.Pgx(), job.Turn{ThreadID: id})
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
		if th.Status == thread.StatusAborted {
			return nil // the abort had the last word: nothing follows it
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
