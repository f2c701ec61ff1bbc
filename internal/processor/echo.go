package processor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
)

// summaryWindow is how many of a thread's newest stitches a summary reads:
// enough for the exchanges since a surface last spoke, in any likely
// conversation, without reading a long thread whole.
const summaryWindow = 200

type echoSummaryWorker struct {
	river.WorkerDefaults[job.EchoSummary]
	p *Processor
}

// Work posts the summary of a conversation that went idle on a surface
// whose echo policy is summary: unless input arrived after the answer that
// scheduled it (a newer answer scheduled its own). The outbox row has an id
// made from what it summarizes, so a job run again after a crash finds it
// written and posts nothing more; the row and its delivery job are written
// under the thread's row lock, so no input slips in between the look and
// the write.
func (w *echoSummaryWorker) Work(ctx context.Context, j *river.Job[job.EchoSummary]) error {
	a := j.Args
	s := outbox.Surface{Platform: thread.Platform(a.Platform), Target: a.Target}
	id := outbox.SummaryID(a.ThreadID, s, a.After)
	return w.p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if _, err := tx.LockThread(ctx, a.ThreadID); errors.Is(err, thread.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		switch _, err := tx.Outbox(ctx, id); {
		case err == nil:
			return nil // posted already
		case !errors.Is(err, thread.ErrNotFound):
			return err
		}
		tail, err := tx.Stitches(ctx, a.ThreadID, db.StitchPage{Newest: true, Limit: summaryWindow})
		if err != nil {
			return err
		}
		for _, st := range tail {
			if st.Seq > a.After && st.Type.IsInput() {
				return nil // not idle: the newer answer's job tells of it
			}
		}
		text, ok := outbox.Summary(tail, s.Platform)
		if !ok {
			return nil
		}
		w.p.logger.InfoContext(ctx, "echo summary", slog.String("thread_id", a.ThreadID.String()), slog.String("platform", a.Platform))
		return outbox.Enqueue(ctx, tx, w.p.client, thread.Outbox{ID: id, ThreadID: a.ThreadID, Platform: s.Platform, Target: s.Target,
			Kind: thread.OutboxResponse}, thread.OutboxBody{Text: text, Echo: true})
	})
}
