package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	// was given up.
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
	b := &pgx.Batch{}
	var read []func(pgx.BatchResults) error
	outs := make([]*Written, len(ws))
	for i, w := range ws {
		outs[i] = &Written{}
		r, err := queueWrite(b, w, outs[i])
		if err != nil {
			return nil, err
		}
		read = append(read, r...)
	}
	if b.Len() == 0 {
		return outs, nil
	}

	res := q.db.SendBatch(ctx, b)
	for _, fn := range read {
		if err := fn(res); err != nil {
			_ = res.Close()
			if r := (refusal{}); errors.As(err, &r) {
				// The transaction is intact: no row is no error.
				return nil, q.refused(ctx, r.thread, r.to)
			}
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("write: %w", translate(err))
	}
	return outs, nil
}

// queueWrite queues w's statements on b and returns, in order, the reads
// of their results into out.
func queueWrite(b *pgx.Batch, w Write, out *Written) ([]func(pgx.BatchResults) error, error) {
	id := w.ThreadID
	if w.New != nil {
		id = w.New.Thread.ID
	}
	var read []func(pgx.BatchResults) error
	execRead := func(r pgx.BatchResults) error {
		_, err := r.Exec()
		return translate(err)
	}

	if h := w.Turn; h != nil {
		b.Queue(`SELECT weft_hold_turn($1, $2)`, id, h.Owner)
		read = append(read, execRead)
	}
	if d := w.New; d != nil {
		b.Queue(insertThreadSQL, insertThreadArgs(d)...)
		read = append(read, func(r pgx.BatchResults) (err error) {
			out.Thread, err = scanThread(r.QueryRow())
			return err
		})
		n := b.Len()
		if d.Discord != nil {
			queueAttachDiscord(b, d.Discord)
		}
		if d.Linear != nil {
			queueAttachLinear(b, d.Linear)
		}
		for i := range d.Stitches {
			queueInsertStitch(b, &d.Stitches[i])
		}
		for range b.Len() - n {
			read = append(read, execRead)
		}
	}
	if w.Inbound != nil {
		in := *w.Inbound
		in.ThreadID = id
		b.Queue(insertInboundSQL, inboundArgs(in)...)
		read = append(read, execRead)
	}
	for _, s := range w.Stitches {
		s.ThreadID = id
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if s.ID == uuid.Nil {
			s.ID = thread.NewID()
		}
		b.Queue(appendStitchSQL, append([]any{s.ID, s.ThreadID}, stitchArgs(&s)...)...)
		read = append(read, func(r pgx.BatchResults) error {
			got, err := scanStitch(r.QueryRow())
			if err == nil {
				out.Stitches = append(out.Stitches, *got)
			}
			return err
		})
	}
	for _, o := range w.Outbox {
		o.ThreadID = id
		if o.ID == uuid.Nil {
			o.ID = thread.NewID()
		}
		if w.SendingFor > 0 {
			b.Queue(insertSendingOutboxSQL, append(insertOutboxArgs(o), w.SendingFor.Milliseconds())...)
		} else {
			b.Queue(insertOutboxSQL, insertOutboxArgs(o)...)
		}
		read = append(read, func(r pgx.BatchResults) error {
			got, err := scanOutbox(r.QueryRow())
			if err == nil {
				out.Outbox = append(out.Outbox, *got)
			}
			return err
		})
	}
	if s := w.Session; s != nil {
		if !s.Status.Valid() {
			return nil, fmt.Errorf("write: %w: linear session status %q", thread.ErrInvalid, s.Status)
		}
		b.Queue(setSessionStatusSQL, s.SessionID, s.Status)
		read = append(read, func(r pgx.BatchResults) error {
			tag, err := r.Exec()
			if err == nil && tag.RowsAffected() == 0 {
				return thread.ErrNotFound
			}
			return translate(err)
		})
	}
	if c := w.Status; c != nil {
		if err := c.Validate(); err != nil {
			return nil, err
		}
		b.Queue(setStatusSQL, setStatusArgs(id, *c)...)
		read = append(read, func(r pgx.BatchResults) error {
			th, err := scanThread(r.QueryRow())
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
		b.Queue(`UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL
			WHERE thread_id = $1 AND lease_owner = $2 AND stitch_count = $3`, id, h.Owner, h.Count)
		read = append(read, func(r pgx.BatchResults) error {
			tag, err := r.Exec()
			out.Released = err == nil && tag.RowsAffected() == 1
			return translate(err)
		})
	}
	return read, nil
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
