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

// Write is what one transaction does to one thread, sent by Queries.Write in a
// single round trip (a pipeline) rather than one statement at a time: under
// load a webhook's or a turn's transaction is mostly waiting on round trips,
// and the connection it holds meanwhile is one the next request cannot have.
// The parts are written in field order; every part is optional.
type Write struct {
	// ThreadID is the thread written to (for a new thread, its draft's id).
	ThreadID uuid.UUID
	// New makes the thread from a Builder's draft. A Discord thread or Linear
	// session attached elsewhere fails the write with
	// thread.ErrDiscordThreadAttached or thread.ErrLinearSessionAttached.
	New *thread.Draft
	// Inbound is the ledger entry of the delivery that causes the write,
	// linked to the thread. A delivery recorded before (by its id or its
	// event key) fails the write with thread.ErrDuplicateDelivery.
	Inbound *thread.Inbound
	// Stitches are appended to the chain in order. Their ids may be set
	// beforehand, so that Outbox rows can name them.
	Stitches []thread.Stitch
	// Approvals are requests for a person's approval, stored with their
	// approval_request stitches (whose ids they take).
	Approvals []thread.Approval
	// Outbox rows are inserted with the thread's id; an unset id is made.
	Outbox []thread.Outbox
	// SendingFor, when set, inserts the Outbox rows already claimed for that
	// long, their first attempt counted, for a caller that sends them the
	// moment the write commits (processor.Express): other senders leave
	// them alone until the claim lapses. The rows must be first in line on
	// their surface, as a new session's first post is.
	SendingFor time.Duration
	// Session sets the Linear session's status and last activity.
	Session *SessionChange
	// Status moves the thread if the status machine allows it, else the
	// write fails with a *thread.TransitionError.
	Status *thread.StatusChange
	// Turn makes the write a step of a turn holding the thread's lease.
	Turn *TurnHold
}

// TurnHold is the claim of the turn that writes: the write goes through
// only while Owner holds the thread's lease and the thread is not aborted,
// and fails with thread.ErrAborted otherwise, writing nothing. The check is
// sent first and takes the thread's row lock, so an abort (which takes it
// too) is ordered strictly before or after the write.
type TurnHold struct {
	Owner string
	// Release gives the lease up last in the write when the thread's chain
	// is then Count stitches long: no stitch the turn has not seen (new
	// input, say) was appended meanwhile. Written.Released says whether it
	// was given up. The write's Status is then made on the same condition:
	// a thread with input its turn has not seen stays running, leased.
	Release bool
	Count   int64
}

// SessionChange is a Linear session's new status.
type SessionChange struct {
	SessionID string
	Status    thread.SessionStatus
}

// Written is what a Write stored.
type Written struct {
	// Thread is the thread as the write left it when it made the thread or
	// changed its status; nil otherwise.
	Thread   *thread.Thread
	Stitches []thread.Stitch
	Outbox   []thread.Outbox
	// Released is set when the write gave up the turn's lease.
	Released bool
}

// Write sends w in one round trip. On the pool the round trip is one
// implicit transaction, all or nothing. In a Tx a failed part aborts the
// transaction, which the caller rolls back (InTx does, when the error is
// returned).
func (q *Queries) Write(ctx context.Context, w Write) (*Written, error) {
	got, err := q.WriteAll(ctx, []Write{w})
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

// WriteAll sends several writes, to as many threads, in one round trip and
// in order: the statements of a batch of deliveries that share a
// transaction. The first part that fails fails them all, as Write would.
func (q *Queries) WriteAll(ctx context.Context, ws []Write) ([]*Written, error) {
	var p pipeline
	outs := make([]*Written, len(ws))
	for i, w := range ws {
		outs[i] = &Written{}
		if err := queueWrite(ctx, &p, w, outs[i]); err != nil {
			return nil, err
		}
	}
	if p.len() == 0 {
		return outs, nil
	}
	if err := p.run(ctx, q.db); err != nil {
		if r := (refusal{}); errors.As(err, &r) {
			// The transaction is intact: no row is no error.
			return nil, q.refused(ctx, r.thread, r.to)
		}
		return nil, fmt.Errorf("write: %w", err)
	}
	return outs, nil
}

// queueWrite queues w's statements on p, each reading its result into out.
func queueWrite(ctx context.Context, p *pipeline, w Write, out *Written) error {
	id := w.ThreadID
	if w.New != nil {
		id = w.New.Thread.ID
	}

	// A turn's step is checked before anything else it writes: by its
	// first append when that comes first (one statement fewer), else by
	// HoldTurn.
	var holdOwner *string
	if h := w.Turn; h != nil {
		if w.New == nil && w.Inbound == nil && len(w.Stitches) > 0 {
			holdOwner = &h.Owner
		} else {
			p.add(func(q *dbsqlc.Queries) error {
				return translate(q.HoldTurn(ctx, dbsqlc.HoldTurnParams{ThreadID: id, Owner: h.Owner}))
			})
		}
	}
	if d := w.New; d != nil {
		arg := insertThreadParams(d)
		p.add(func(q *dbsqlc.Queries) (err error) {
			out.Thread, err = threadOf(q.InsertThread(ctx, arg))
			return err
		})
		if d.Discord != nil {
			queueAttachDiscord(ctx, p, d.Discord)
		}
		if d.Linear != nil {
			queueAttachLinear(ctx, p, d.Linear)
		}
		if d.Slack != nil {
			queueAttachSlack(ctx, p, d.Slack)
		}
		if d.GitHub != nil {
			queueAttachGitHub(ctx, p, d.GitHub)
		}
		for i := range d.Stitches {
			arg := insertStitchParams(&d.Stitches[i])
			p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertStitch(ctx, arg)) })
		}
	}
	if w.Inbound != nil {
		in := *w.Inbound
		in.ThreadID = id
		arg := inboundParams(in)
		p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertInbound(ctx, arg)) })
	}
	for _, s := range w.Stitches {
		s.ThreadID = id
		if err := s.Validate(); err != nil {
			return err
		}
		if s.ID == uuid.Nil {
			s.ID = thread.NewID()
		}
		arg := appendStitchParams(&s)
		arg.Owner, holdOwner = holdOwner, nil
		p.add(func(q *dbsqlc.Queries) error {
			row, err := q.AppendStitch(ctx, arg)
			got, err := appended(arg, row, err)
			if err == nil {
				out.Stitches = append(out.Stitches, *got)
			}
			return err
		})
	}
	for _, a := range w.Approvals {
		a.ThreadID = id
		queueApproval(ctx, p, a)
	}
	for _, o := range w.Outbox {
		o.ThreadID = id
		if o.ID == uuid.Nil {
			o.ID = thread.NewID()
		}
		arg := insertOutboxParams(o)
		if w.SendingFor > 0 {
			claim := w.SendingFor.Milliseconds()
			arg.ClaimMs = &claim
		}
		p.add(func(q *dbsqlc.Queries) error {
			got, err := outboxOf(q.InsertOutbox(ctx, arg))
			if err == nil {
				out.Outbox = append(out.Outbox, *got)
			}
			return err
		})
	}
	if s := w.Session; s != nil {
		if !s.Status.Valid() {
			return fmt.Errorf("write: %w: linear session status %q", thread.ErrInvalid, s.Status)
		}
		arg := dbsqlc.SetLinearSessionStatusParams{SessionID: s.SessionID, SessionStatus: string(s.Status)}
		p.add(func(q *dbsqlc.Queries) error {
			n, err := q.SetLinearSessionStatus(ctx, arg)
			if err == nil && n == 0 {
				return thread.ErrNotFound
			}
			return translate(err)
		})
	}
	if c := w.Status; c != nil {
		if err := c.Validate(); err != nil {
			return err
		}
		arg := setStatusParams(id, *c)
		if h := w.Turn; h != nil && h.Release {
			// The turn's last step: it settles the thread only when no input
			// it has not seen arrived meanwhile. Otherwise the thread stays
			// running under the lease, which Release below keeps too.
			settle := dbsqlc.SettleTurnStatusParams{ThreadID: arg.ThreadID, Status: arg.Status, WaitingReason: arg.WaitingReason,
				Result: arg.Result, Error: arg.Error, Sources: arg.Sources, StitchCount: h.Count}
			p.add(func(q *dbsqlc.Queries) error {
				th, err := threadOf(q.SettleTurnStatus(ctx, settle))
				if errors.Is(err, thread.ErrNotFound) {
					return nil // HoldTurn found the thread running: it moved on
				}
				out.Thread = th
				return err
			})
			return queueRelease(ctx, p, id, h, out)
		}
		p.add(func(q *dbsqlc.Queries) error {
			th, err := threadOf(q.SetStatus(ctx, arg))
			if errors.Is(err, thread.ErrNotFound) {
				return refusal{thread: id, to: c.To}
			}
			if err == nil {
				out.Thread = th
			}
			return err
		})
	}
	if h := w.Turn; h != nil && h.Release {
		return queueRelease(ctx, p, id, h, out)
	}
	return nil
}

// queueRelease queues the release of h's lease when the chain is h.Count
// stitches long.
func queueRelease(ctx context.Context, p *pipeline, id uuid.UUID, h *TurnHold, out *Written) error {
	arg := dbsqlc.ReleaseTurnParams{ThreadID: id, Owner: h.Owner, StitchCount: h.Count}
	p.add(func(q *dbsqlc.Queries) error {
		n, err := q.ReleaseTurn(ctx, arg)
		out.Released = err == nil && n == 1
		return translate(err)
	})
	return nil
}

// refusal is a status change that matched no row.
type refusal struct {
	thread uuid.UUID
	to     thread.Status
}

func (refusal) Error() string { return "status change refused" }

// refused says why a status change matched no row: the thread is in a
// status the change cannot leave, or is gone.
func (q *Queries) refused(ctx context.Context, id uuid.UUID, to thread.Status) error {
	cur, err := q.Thread(ctx, id)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return fmt.Errorf("write: %w", &thread.TransitionError{From: cur.Status, To: to})
}
