package processor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
)

// sweepBatch bounds the work one sweep enqueues.
const sweepBatch = 500

// strandedGrace is how long a due outbox row may wait for its job before the
// sweeper assumes the job was lost.
const strandedGrace = time.Minute

// stuckTurnGrace is how long a turn job may run without its thread's lease
// before the sweeper takes its replica for dead (db.StuckTurnJobs).
const stuckTurnGrace = time.Minute

type sweepWorker struct {
	river.WorkerDefaults[job.Sweep]
	p *Processor
}

// Work enqueues turns for threads whose turn job a dead replica left
// running before it took the lease, and deliveries for due outbox rows
// whose job was lost, and runs the platforms' own sweeps (Config.Sweeps).
// Threads whose lease lapsed are the reclaim's, every second.
func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[job.Sweep]) (err error) {
	p := w.p
	var lapsed []uuid.UUID
	defer func() { p.cfg.Metrics.Sweep("sweep", err, len(lapsed)) }()
	// Found and enqueued in one transaction, with one insert.
	var stranded []thread.Outbox
	err = p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) (err error) {
		stuck, err := tx.StuckTurnJobs(ctx, job.Turn{}.Kind(), stuckTurnGrace, sweepBatch)
		if err != nil {
			return err
		}
		for _, s := range stuck {
			// The dead job's thread may have input it never took up (it died
			// before the lease): a new turn answers it, and River's rescuer
			// cancels the dead job rather than retry it.
			if !slices.Contains(lapsed, s.ThreadID) {
				lapsed = append(lapsed, s.ThreadID)
			}
			if _, err := p.client.JobCancelTx(ctx, tx.Pgx(), s.JobID); err != nil {
				return fmt.Errorf("cancel stuck turn job: %w", err)
			}
		}
		if stranded, err = tx.StrandedOutbox(ctx, strandedGrace, sweepBatch); err != nil {
			return err
		}
		jobs := make([]river.JobArgs, 0, len(lapsed)+len(stranded))
		for _, id := range lapsed {
			jobs = append(jobs, job.Turn{ThreadID: id})
		}
		jobs = append(jobs, outbox.Deliveries(stranded)...)
		return job.InsertTx(ctx, p.client, tx.Pgx(), jobs...)
	})
	if err != nil {
		return err
	}
	swept := int64(len(lapsed) + len(stranded))
	attrs := []any{slog.Int("threads", len(lapsed)), slog.Int("deliveries", len(stranded))}
	for _, s := range p.cfg.Sweeps {
		n, err := s.Run(ctx)
		if err != nil {
			return fmt.Errorf("sweep %s: %w", s.Name, err)
		}
		swept += n
		attrs = append(attrs, slog.Int64(s.Name, n))
	}
	if swept > 0 {
		p.logger.InfoContext(ctx, "swept", attrs...)
	}
	return nil
}

type reclaimWorker struct {
	river.WorkerDefaults[job.Reclaim]
	p *Processor
}

// Work hands outbox rows whose sender's claim lapsed to delivery jobs, and
// running threads whose turn lease lapsed (their replica died mid-turn) to
// turn jobs: every second, so a dead replica's turn resumes about a second
// after its lease lapses, not at the next sweep.
func (w *reclaimWorker) Work(ctx context.Context, _ *river.Job[job.Reclaim]) error {
	p := w.p
	var lapsed []uuid.UUID
	n, err := p.handOver(ctx, p.store, func(ctx context.Context, tx *db.Tx) ([]thread.Outbox, error) {
		var err error
		if lapsed, err = tx.LapsedThreads(ctx, job.Turn{}.Kind(), sweepBatch); err != nil {
			return nil, err
		}
		turns := make([]river.JobArgs, len(lapsed))
		for i, id := range lapsed {
			turns[i] = job.Turn{ThreadID: id}
		}
		if err := job.InsertTx(ctx, p.client, tx.Pgx(), turns...); err != nil {
			return nil, fmt.Errorf("enqueue lapsed turns: %w", err)
		}
		return tx.ReclaimLapsedOutbox(ctx, sweepBatch)
	})
	p.cfg.Metrics.Sweep("reclaim", err, len(lapsed))
	if err != nil {
		return err
	}
	if n+len(lapsed) > 0 {
		p.logger.InfoContext(ctx, "reclaimed", slog.Int("deliveries", n), slog.Int("threads", len(lapsed)))
	}
	return nil
}

// handOver runs release, which gives up claims on outbox rows, in one
// transaction with the delivery jobs that will send those rows: a row is
// never left released without a job, nor given two by overlapping
// hand-overs. It returns how many rows were handed over.
func (p *Processor) handOver(ctx context.Context, store *db.Store, release func(context.Context, *db.Tx) ([]thread.Outbox, error)) (int, error) {
	var n int
	err := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		rows, err := release(ctx, tx)
		if err != nil {
			return err
		}
		n = len(rows)
		return job.InsertTx(ctx, p.client, tx.Pgx(), outbox.Deliveries(rows)...)
	})
	return n, err
}
