package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Record records one inbound event in one transaction, whatever its
// platform: the ledger entry (a delivery seen before, by its id or its
// event key, writes nothing more), the thread found by its conversation
// or built from the event, the stitches, the acknowledging outbox row and
// the jobs. An event weft does not act on is recorded as ignored.
//
// A delivery whose body jsonb refuses (\u0000, half an emoji, invalid
// UTF-8, a number beyond numeric's range) is kept without it, rather than
// refused forever. One that is signed but unusable (thread.ErrInvalid: a
// session without a workspace, say) is recorded as ignored, not worth a
// retry. An input stored already by a path the ledger did not see (a
// stitch with its external id) is a redelivery all the same.
func (in *Ingester) Record(ctx context.Context, ev surface.Event) (surface.Recorded, error) {
	res, err := in.record(ctx, ev)
	if errors.Is(err, thread.ErrUnstorable) && ev.Inbound.Payload != nil {
		ev.Inbound.Payload = nil
		res, err = in.record(ctx, ev)
	}
	if errors.Is(err, thread.ErrInvalid) && ev.Inbound.DeliveryID != "" && ev.Kind != surface.Ignore {
		in.logger.WarnContext(ctx, "delivery cannot be acted on", slog.String("platform", string(ev.Inbound.Platform)),
			slog.String("delivery_id", ev.Inbound.DeliveryID), slog.Any("error", err))
		res, err = in.record(ctx, surface.Event{Kind: surface.Ignore, Inbound: ev.Inbound})
	}
	if errors.Is(err, thread.ErrDuplicateExternalID) {
		res, err = surface.Recorded{Duplicate: true}, nil
	}
	return res, err
}

func (in *Ingester) record(ctx context.Context, ev surface.Event) (surface.Recorded, error) {
	var res surface.Recorded
	var err error
	switch ev.Kind {
	case surface.Open:
		res, err = in.open(ctx, ev)
	case surface.Message:
		res, err = in.message(ctx, ev)
	case surface.Edit, surface.Delete:
		res, err = in.edit(ctx, ev)
	case surface.Stop:
		res, err = in.stop(ctx, ev)
	case surface.Close, surface.Reopen:
		err = in.store.SetAttachmentActive(ctx, ev.Conversation, ev.Kind == surface.Reopen)
		if errors.Is(err, thread.ErrNotFound) {
			res.Ignored, err = true, nil
		}
	case surface.Revoke:
		res, err = in.revoke(ctx, ev)
	case surface.Command, surface.Ignore:
		d := ev.Inbound
		if ev.Kind == surface.Ignore {
			d.Outcome = thread.InboundIgnored
		}
		var fresh bool
		fresh, err = in.store.RecordInbound(ctx, d)
		res = surface.Recorded{Duplicate: !fresh, Ignored: ev.Kind == surface.Ignore}
	default:
		err = fmt.Errorf("%w: event kind %q", thread.ErrInvalid, ev.Kind)
	}
	if err != nil {
		return surface.Recorded{}, fmt.Errorf("ingest %s %s: %w", ev.Inbound.Platform, ev.Kind, err)
	}
	return res, nil
}

// open builds the event's thread, in a transaction shared with the other
// openings of a burst (see openings). A conversation that has a thread
// already takes the event as a Message.
func (in *Ingester) open(ctx context.Context, ev surface.Event) (surface.Recorded, error) {
	draft, err := in.draft(ctx, ev)
	if err != nil {
		return surface.Recorded{}, err
	}
	d := ev.Inbound
	d.Outcome = thread.InboundProcessed
	built := ev
	built.Messages = make([]thread.Stitch, len(ev.Messages))
	for i, s := range ev.Messages {
		s.Metadata = tracing.Stamp(ctx, s.Metadata)
		built.Messages[i] = s
	}
	o := &opening{ctx: ctx, d: d, ev: built, draft: draft}
	in.openings.do(o)
	switch err = o.err; {
	case err == nil:
		return surface.Recorded{ThreadID: o.th.ID, Added: 1}, nil
	case errors.Is(err, thread.ErrDuplicateDelivery):
		return surface.Recorded{Duplicate: true}, nil
	case !thread.IsAttached(err):
		return surface.Recorded{}, err
	}
	// Another event of the conversation got there first and made its
	// thread: this one goes to that thread.
	return in.message(ctx, ev)
}

// draft is the thread an Open or Stop would build. It is drafted before
// the transaction because drafting reads the agent's memory on the pool:
// inside the transaction each concurrent delivery would hold one
// connection while waiting for another, and a burst could take them all.
// A redelivery drafts for nothing, which costs one read.
func (in *Ingester) draft(ctx context.Context, ev surface.Event) (*thread.Draft, error) {
	prompt := ev.Prompt
	prompt.Metadata = tracing.Stamp(ctx, prompt.Metadata)
	return in.Builder().WithGoal(ev.Goal).Interactive(ev.Conversation).WithInitialPrompt(prompt).Draft(ctx)
}

// message adds an event's messages to its conversation's thread in one
// transaction: the ledger entry (or one per message, without a delivery
// id), the thread (built when the event Opens and there is none), each
// message not stored before, the backfill's cursor, the conversation
// marked active, and a turn when one was added and is to be answered.
func (in *Ingester) message(ctx context.Context, ev surface.Event) (res surface.Recorded, err error) {
	var draft *thread.Draft
	if ev.Opens {
		// Drafting reads memory through the pool: never inside the
		// transaction (see draft).
		if draft, err = in.draft(ctx, ev); err != nil {
			return res, err
		}
	}
	platform := ev.Inbound.Platform
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) (err error) {
		res = surface.Recorded{}
		var th *thread.Thread
		var made bool
		if draft != nil {
			// The delivery first: a redelivery must not build the thread.
			if th, made, err = in.deliveredTo(ctx, tx, ev, draft); err != nil || th == nil {
				res.Duplicate = err == nil
				return err
			}
		} else {
			th, err = tx.ThreadByAttachment(ctx, ev.Conversation)
			if errors.Is(err, thread.ErrNotFound) {
				res.Ignored = true
				if ev.Inbound.DeliveryID == "" {
					return nil
				}
				// Not weft's conversation: ledger only, and without the
				// event's key, which an Open of it must still find free.
				d := ev.Inbound
				d.Outcome, d.EventKey = thread.InboundIgnored, ""
				fresh, err := tx.RecordInbound(ctx, d)
				res.Duplicate = !fresh
				return err
			}
			if err != nil {
				return err
			}
			if ev.Inbound.DeliveryID != "" {
				if fresh, err := in.ledger(ctx, tx, ev.Inbound, th); err != nil || !fresh {
					res.Duplicate = !fresh
					return err
				}
			}
		}
		res.ThreadID = th.ID
		for _, s := range ev.Messages {
			if made && s.ExternalID == ev.Prompt.ExternalID {
				continue // the new thread's initial prompt already
			}
			if ev.Inbound.DeliveryID == "" {
				d := ev.Inbound
				d.DeliveryID, d.EventKey = s.ExternalID, s.ExternalID
				if fresh, err := in.ledger(ctx, tx, d, th); err != nil || !fresh {
					if err != nil {
						return err
					}
					continue
				}
			}
			s.ThreadID, s.Source = th.ID, platform
			s.Metadata = tracing.Stamp(ctx, s.Metadata)
			if _, err := tx.AppendStitch(ctx, s); err != nil {
				return err
			}
			res.Added++
		}
		if ev.SeenThrough != "" {
			if err := tx.SetSeenThrough(ctx, ev.Conversation, ev.SeenThrough); err != nil {
				return err
			}
		}
		if res.Added == 0 {
			res.Duplicate = !made && ev.Inbound.DeliveryID == "" && len(ev.Messages) > 0
			return nil
		}
		if err := tx.ActivateAttachment(ctx, th.ID, ev.Conversation); err != nil {
			return err
		}
		if !ev.Answer || made {
			return nil // a new thread's turn answers its messages too
		}
		return in.enqueueTurn(ctx, tx, th.ID)
	})
	return res, err
}

// deliveredTo records ev's delivery, then finds or builds its conversation's
// thread and links the delivery to it; a nil thread for a delivery seen
// before.
func (in *Ingester) deliveredTo(ctx context.Context, tx *db.Tx, ev surface.Event, draft *thread.Draft) (*thread.Thread, bool, error) {
	d := ev.Inbound
	d.Outcome = thread.InboundProcessed
	if fresh, err := tx.RecordInbound(ctx, d); err != nil || !fresh {
		return nil, false, err
	}
	th, made, err := in.threadOf(ctx, tx, ev, draft)
	if err != nil {
		return nil, false, err
	}
	return th, made, tx.SetInboundThread(ctx, d.Platform, d.DeliveryID, th.ID.String())
}

// ledger records d, processed, linked to th; false for a delivery seen
// before.
func (in *Ingester) ledger(ctx context.Context, tx *db.Tx, d thread.Inbound, th *thread.Thread) (bool, error) {
	d.Outcome = thread.InboundProcessed
	fresh, err := tx.RecordInbound(ctx, d)
	if err != nil || !fresh {
		return false, err
	}
	return true, tx.SetInboundThread(ctx, d.Platform, d.DeliveryID, th.ID.String())
}

// edit records an edit or delete of a message weft stored, with its ledger
// entry when it has a delivery id: its latest text and when, or that it
// was deleted (history keeps the stitch marked deleted; the model no
// longer sees it). It answers nothing, and an edit of a message weft never
// stored is ignored.
func (in *Ingester) edit(ctx context.Context, ev surface.Event) (res surface.Recorded, err error) {
	if len(ev.Messages) != 1 {
		return res, fmt.Errorf("%w: an edit names one message", thread.ErrInvalid)
	}
	m := ev.Messages[0]
	e := db.StitchEdit{Content: m.Content, EditedAt: ev.At}
	if ev.Kind == surface.Delete {
		e = db.StitchEdit{DeletedAt: ev.At}
	}
	apply := func(ctx context.Context, q *db.Queries) error {
		_, err := q.EditStitch(ctx, ev.Inbound.Platform, m.ExternalID, e)
		if errors.Is(err, thread.ErrNotFound) {
			res.Ignored = true
			return nil
		}
		return err
	}
	if ev.Inbound.DeliveryID == "" {
		return res, apply(ctx, &in.store.Queries)
	}
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		d := ev.Inbound
		d.Outcome = thread.InboundProcessed
		fresh, err := tx.RecordInbound(ctx, d)
		if err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		return apply(ctx, &tx.Queries)
	})
	return res, err
}

// stop records a stop request in one transaction: the ledger entry, the
// conversation's thread (built first, as Open would, when there is none),
// the request itself, then the thread's abort (which cancels a running
// turn through its heartbeat) and ev.Reply confirming it. A thread that is
// not running anything (finished, or already stopped) is not aborted
// again, but the stop is still recorded and confirmed.
func (in *Ingester) stop(ctx context.Context, ev surface.Event) (res surface.Recorded, err error) {
	if len(ev.Messages) != 1 {
		return res, fmt.Errorf("%w: a stop is one message", thread.ErrInvalid)
	}
	draft, err := in.draft(ctx, ev)
	if err != nil {
		return res, err
	}
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		res = surface.Recorded{}
		th, _, err := in.deliveredTo(ctx, tx, ev, draft)
		if err != nil || th == nil {
			res.Duplicate = err == nil
			return err
		}
		res.ThreadID = th.ID
		s := ev.Messages[0]
		s.Source, s.Metadata = ev.Inbound.Platform, tracing.Stamp(ctx, s.Metadata)
		return in.stopThread(ctx, tx, th.ID, s, ev.Reply)
	})
	return res, err
}

// threadOf returns the conversation's thread, making it from draft, with
// ev's Ack, its turn and ev's jobs, when it does not exist yet; it reports
// whether it made it.
func (in *Ingester) threadOf(ctx context.Context, tx *db.Tx, ev surface.Event, draft *thread.Draft) (*thread.Thread, bool, error) {
	th, err := tx.ThreadByAttachment(ctx, ev.Conversation)
	if err == nil || !errors.Is(err, thread.ErrNotFound) {
		return th, false, err
	}
	err = tx.Savepoint(ctx, func(tx *db.Tx) error {
		w := db.Write{New: draft}
		if ev.Ack != nil {
			w.Outbox = []thread.Outbox{*ev.Ack}
		}
		got, err := tx.Write(ctx, w)
		if err != nil {
			return err
		}
		th = got.Thread
		return job.InsertTx(ctx, in.jobs, tx.Pgx(), threadJobs(ev, got, false)...)
	})
	if thread.IsAttached(err) {
		// Another event of the conversation made it concurrently; the
		// insert waited for that commit, and the savepoint keeps this
		// transaction going.
		th, err = tx.ThreadByAttachment(ctx, ev.Conversation)
		return th, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return th, true, nil
}

// stopThread records stop, then the thread's abort and reply confirming it.
func (in *Ingester) stopThread(ctx context.Context, tx *db.Tx, threadID uuid.UUID, stop thread.Stitch, reply string) error {
	th, err := tx.LockThread(ctx, threadID)
	if err != nil {
		return err
	}
	// The stop request is answered by the stop itself, not by a turn: it
	// takes the seq after the head, and the stop's thought covers it.
	e := thread.StopEffects(th.StitchCount+1, reply)
	e.Stitches = append([]thread.Stitch{stop}, e.Stitches...)
	for i := range e.Outputs {
		e.Outputs[i].Stitch++
	}
	if !thread.CanTransition(th.Status, thread.StatusAborted) {
		e.Status = nil
	}
	_, err = outbox.Write(ctx, tx, in.jobs, threadID, e)
	return err
}

// revoke records a tenant's uninstall with its ledger entry: the
// installation is deactivated.
func (in *Ingester) revoke(ctx context.Context, ev surface.Event) (res surface.Recorded, err error) {
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		d := ev.Inbound
		d.Outcome = thread.InboundProcessed
		if fresh, err := tx.RecordInbound(ctx, d); err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		if res.Revoked, err = tx.RevokeTenant(ctx, ev.Tenant); err != nil {
			return err
		}
		in.logger.InfoContext(ctx, "installation revoked", slog.String("platform", string(d.Platform)),
			slog.String("tenant_id", ev.Tenant.ID), slog.Bool("was_active", res.Revoked))
		return nil
	})
	return res, err
}

// threadJobs are the jobs a new thread's write needs, in order: its
// outbox rows' deliveries (none when they go express: express hands a row
// to a job when its send fails, and the leader's reclaim when the claim
// lapses unsent), the turn, and the event's own.
func threadJobs(ev surface.Event, got *db.Written, express bool) []river.JobArgs {
	var jobs []river.JobArgs
	if !express {
		jobs = outbox.Deliveries(got.Outbox)
	}
	jobs = append(jobs, job.Turn{ThreadID: got.Thread.ID})
	for _, j := range ev.Jobs {
		jobs = append(jobs, j)
	}
	return jobs
}
