package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// openBatch opens the threads of a batch (see openings) in one
// transaction. When the database refuses it, because one of them is a
// redelivery, say, each half is tried again, down to single threads, so
// that each gets its own answer and no delivery fails for another's sake,
// in a few transactions rather than one per thread. Each caller is
// settled, and its acknowledgement sent, as soon as its thread is written.
func (in *Ingester) openBatch(ctx context.Context, batch []*opening) {
	err := in.openTogether(ctx, batch)
	if err != nil && len(batch) > 1 && db.Refused(err) {
		in.logger.DebugContext(ctx, "new threads refused together; trying them by halves",
			slog.Int("threads", len(batch)), slog.Any("error", err))
		half := len(batch) / 2
		in.openBatch(ctx, batch[:half])
		in.openBatch(ctx, batch[half:])
		return
	}
	// Written, or failed in a way its parts would fare no better.
	for _, o := range batch {
		o.err = err
	}
	in.opened(batch)
}

// opened settles the callers of a batch whose results are final, sending
// each written thread's acknowledgement at once.
func (in *Ingester) opened(batch []*opening) {
	for _, o := range batch {
		if o.err == nil && o.ack != nil && in.express != nil {
			in.express.Send(o.ctx, *o.ack)
		}
		o.settle()
	}
}

// openTogether opens threads in one transaction: their writes in one
// round trip, their jobs in one insert; it sets their results once that
// has committed. Threads are written in order of their conversations, so
// that two batches sharing some (concurrent redeliveries) take their
// locks in the same order and wait for each other rather than deadlock.
func (in *Ingester) openTogether(ctx context.Context, batch []*opening) error {
	sorted := slices.SortedFunc(slices.Values(batch), func(a, b *opening) int {
		return strings.Compare(a.ev.Conversation.Conversation(), b.ev.Conversation.Conversation())
	})
	express := in.express != nil
	var claim time.Duration
	if express {
		claim = in.express.Claim()
	}
	ws := make([]db.Write, len(sorted))
	for i, o := range sorted {
		ws[i] = openWrite(&o.d, o.ev, o.draft, claim)
	}
	var got []*db.Written
	err := in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) (err error) {
		if got, err = tx.WriteAll(ctx, ws); err != nil {
			return err
		}
		// Each thread's jobs carry its own caller's trace, not the
		// batch's (tracing.Middleware would give them all the first's).
		var params []river.InsertManyParams
		for i, o := range sorted {
			opts := &river.InsertOpts{Metadata: tracing.Metadata(o.ctx)}
			for _, a := range threadJobs(o.ev, got[i], express) {
				params = append(params, river.InsertManyParams{Args: a, InsertOpts: opts})
			}
		}
		if _, err := in.jobs.InsertManyTx(ctx, tx.Pgx(), params); err != nil {
			return fmt.Errorf("enqueue new threads' jobs: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, o := range sorted {
		o.th = got[i].Thread
		if len(got[i].Outbox) > 0 {
			o.ack = &got[i].Outbox[0]
		}
	}
	return nil
}

// openWrite is the write that makes an Open's thread from draft, with the
// delivery d, the event's messages that are not its prompt, and its Ack.
// With a claim (express), the Ack is written claimed that long for an
// express send, which the caller starts after the commit.
func openWrite(d *thread.Inbound, ev surface.Event, draft *thread.Draft, claim time.Duration) db.Write {
	w := db.Write{Inbound: d, New: draft, SendingFor: claim}
	for _, s := range ev.Messages {
		if s.ExternalID == ev.Prompt.ExternalID {
			continue // the new thread's initial prompt already
		}
		s.Source = ev.Inbound.Platform
		w.Stitches = append(w.Stitches, s)
	}
	if ev.Ack != nil {
		w.Outbox = []thread.Outbox{*ev.Ack}
	}
	return w
}
