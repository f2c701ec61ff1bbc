// Package outbox records a step of a thread (its effects) in the caller's
// transaction: the stitches, an outbox row per output for the surface the
// thread's latest input came from, a delivery job per row, and the status
// change; and (Echo) what the thread's other surfaces hear of an answer. The turn processor and the ingester both write through it, so a
// post is always committed with the stitch it comes from and the job that
// sends it.
package outbox

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Surface is where a thread's outputs go now.
type Surface = thread.Surface

// Route finds the surface of the thread's newest input: an answer goes where
// the question was asked. Autonomous threads, and input from the API or the
// CLI, have none.
func Route(ctx context.Context, tx *db.Tx, threadID uuid.UUID) (*Surface, error) {
	p, target, err := tx.InputSurface(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return SurfaceOf(p, target), nil
}

// SurfaceOf is the surface of a platform and target as db reports them; nil
// when there is none.
func SurfaceOf(p thread.Platform, target string) *Surface {
	if p == "" {
		return nil
	}
	return &Surface{Platform: p, Target: target}
}

// Write records e on the thread in tx: its stitches, an outbox row and a
// delivery job per output its surface shows, the surface's session status,
// and the status change. The caller holds the thread's row lock when the
// order of its appends matters. The writes go in one round trip and the
// jobs in one more.
func Write(ctx context.Context, tx *db.Tx, ins job.Inserter, threadID uuid.UUID, e thread.Effects) ([]thread.Stitch, error) {
	var surface *Surface
	if len(e.Outputs) > 0 {
		var err error
		if surface, err = Route(ctx, tx, threadID); err != nil {
			return nil, err
		}
	}
	for i := range e.Stitches {
		e.Stitches[i].Metadata = tracing.Stamp(ctx, e.Stitches[i].Metadata)
	}
	got, err := tx.Write(ctx, Plan(threadID, surface, e))
	if err != nil {
		return nil, err
	}
	if err := enqueue(ctx, tx, ins, got.Outbox); err != nil {
		return nil, err
	}
	return got.Stitches, nil
}

// Plan is the write that records e on the thread when its outputs go to
// surface (nil: nowhere): the stitches, with their ids set so the outbox
// rows can name them, an outbox row per output the surface shows, and the
// surface's session status after them (thread.Platform.SessionAfter).
func Plan(threadID uuid.UUID, surface *Surface, e thread.Effects) db.Write {
	w := db.Write{ThreadID: threadID, Stitches: make([]thread.Stitch, len(e.Stitches)), Status: e.Status}
	for i, s := range e.Stitches {
		if s.ID == uuid.Nil {
			s.ID = thread.NewID()
		}
		w.Stitches[i] = s
	}
	for _, a := range e.Approvals {
		if a.Stitch >= 0 && a.Stitch < len(w.Stitches) {
			a.ID = w.Stitches[a.Stitch].ID
		}
		w.Approvals = append(w.Approvals, a.Approval)
	}
	if surface != nil {
		w.Outbox, w.Session = outputs(surface, e.Outputs, w.Stitches)
	}
	return w
}

// Commit sends w with a delivery job per outbox row, and jobs: on the pool
// in one round trip (an implicit transaction) when it has neither, else in
// a transaction with the jobs.
func Commit(ctx context.Context, store *db.Store, ins job.Inserter, w db.Write, jobs ...river.InsertManyParams) (*db.Written, error) {
	if len(w.Outbox) == 0 && len(jobs) == 0 {
		return store.Write(ctx, w)
	}
	var got *db.Written
	err := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		var err error
		if got, err = tx.Write(ctx, w); err != nil {
			return err
		}
		if len(jobs) > 0 {
			if _, err := ins.InsertManyTx(ctx, tx.Pgx(), jobs); err != nil {
				return fmt.Errorf("enqueue: %w", err)
			}
		}
		return enqueue(ctx, tx, ins, got.Outbox)
	})
	return got, err
}

// outputs are the outbox rows for the outputs surface shows, each naming
// the stitch it comes from, and the session status the last leaves.
func outputs(surface *Surface, outs []thread.Output, stitches []thread.Stitch) ([]thread.Outbox, *db.SessionChange) {
	var rows []thread.Outbox
	var last thread.OutboxKind
	for _, o := range outs {
		if !surface.Platform.Shows(o.Kind) {
			continue
		}
		var stitchID uuid.UUID
		if o.Stitch >= 0 && o.Stitch < len(stitches) {
			stitchID = stitches[o.Stitch].ID
		}
		rows = append(rows, thread.Outbox{StitchID: stitchID, Platform: surface.Platform,
			Target: surface.Target, Kind: o.Kind, Body: o.OutboxBody.JSON()})
		last = o.Kind
	}
	st, ok := surface.Platform.SessionAfter(last)
	if !ok {
		return rows, nil
	}
	return rows, &db.SessionChange{SessionID: surface.Target, Status: st}
}

// Enqueue writes one outbox row and its delivery job in tx.
func Enqueue(ctx context.Context, tx *db.Tx, ins job.Inserter, o thread.Outbox, body thread.OutboxBody) error {
	o.Body = body.JSON()
	got, err := tx.Write(ctx, db.Write{ThreadID: o.ThreadID, Outbox: []thread.Outbox{o}})
	if err != nil {
		return err
	}
	return enqueue(ctx, tx, ins, got.Outbox)
}

// enqueue inserts a delivery job per outbox row, in one statement.
func enqueue(ctx context.Context, tx *db.Tx, ins job.Inserter, rows []thread.Outbox) error {
	if err := job.InsertTx(ctx, ins, tx.Pgx(), Deliveries(rows)...); err != nil {
		return fmt.Errorf("enqueue delivery: %w", err)
	}
	return nil
}

// Deliveries are the delivery jobs for outbox rows.
func Deliveries(rows []thread.Outbox) []river.JobArgs {
	jobs := make([]river.JobArgs, len(rows))
	for i, o := range rows {
		jobs[i] = job.Delivery{OutboxID: o.ID, ThreadID: o.ThreadID}
	}
	return jobs
}
