// Package ingest is the one place an inbound event (a webhook, a gateway
// message, an API or CLI call) becomes rows and a job: the ledger entry, the
// thread (found, or made by the ThreadBuilder), the input stitch, any
// acknowledging outbox row, and the turn that answers it, all in one
// transaction. Whatever door an event came in by, it is stored once and
// answered once.
package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Ingester writes inbound events.
type Ingester struct {
	store    *db.Store
	jobs     job.Inserter
	memory   *thread.MemoryManager
	express  Express
	openings *openings
	logger   *slog.Logger
}

// Express sends an outbox row at once, outside the job queue, after the
// transaction that wrote it, claimed for express, has committed
// (processor.Express). ctx is the writer's, for its values (the trace):
// the send outlives it.
type Express interface {
	Send(ctx context.Context, o thread.Outbox)
	// Claim is how long a row must be written claimed for its send
	// (db.Write.SendingFor).
	Claim() time.Duration
}

// Deps is what an Ingester needs.
type Deps struct {
	// Store is where events are written.
	Store *db.Store
	// Jobs enqueues the turns and deliveries an event causes.
	Jobs job.Inserter
	// Express, when set, sends acknowledgements the moment they commit;
	// nil leaves them to delivery jobs.
	Express Express
	Logger  *slog.Logger
	// Persona opens new threads' system prompts instead of
	// thread.DefaultPersona (WEFT_PERSONA); empty keeps the default.
	Persona string
}

// New returns an Ingester writing to d.Store and enqueueing through
// d.Jobs.
func New(d Deps) *Ingester {
	in := &Ingester{store: d.Store, jobs: d.Jobs, memory: &thread.MemoryManager{Memory: d.Store, Persona: d.Persona}, express: d.Express,
		logger: d.Logger.With("component", "ingest")}
	// Half the pool for new threads' transactions leaves the rest for the
	// reads before them (drafting) and for express sends. Fewer at a time
	// batch more and cost less CPU, but then one slow commit holds up every
	// thread behind it (docs/architecture.md, "Measured").
	in.openings = &openings{max: max(1, int(d.Store.Pool().Config().MaxConns)/2), open: in.openBatch}
	return in
}

// Builder returns a ThreadBuilder using the ingester's memory manager.
func (in *Ingester) Builder() *thread.Builder { return thread.NewBuilder(in.memory) }

// StartThread builds a new thread and enqueues its first turn, atomically.
func (in *Ingester) StartThread(ctx context.Context, b *thread.Builder) (*thread.Thread, error) {
	// Draft before the transaction: the system prompt reads memory through
	// the pool, and doing that while holding a transaction's connection can
	// exhaust the pool under a burst and wait forever.
	d, err := b.Draft(ctx)
	if err != nil {
		return nil, fmt.Errorf("start thread: %w", err)
	}
	var th *thread.Thread
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		// One round trip for the thread (no savepoint: nothing follows a
		// failure), one for its turn's job.
		got, err := tx.Write(ctx, db.Write{New: d})
		if err != nil {
			return err
		}
		th = got.Thread
		return in.enqueueTurn(ctx, tx, th.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("start thread: %w", err)
	}
	return th, nil
}

// AddInput appends an input stitch (a message, a prompt) to a thread and
// enqueues a turn to answer it, atomically. An input already stored (same
// source and external id) fails with thread.ErrDuplicateExternalID and
// changes nothing.
func (in *Ingester) AddInput(ctx context.Context, threadID uuid.UUID, s thread.Stitch) (*thread.Stitch, error) {
	if !s.Type.IsInput() {
		return nil, fmt.Errorf("add input: %w: %s is not an input stitch", thread.ErrInvalid, s.Type)
	}
	var out *thread.Stitch
	s.Metadata = tracing.Stamp(ctx, s.Metadata)
	err := in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		s.ThreadID = threadID
		var err error
		if out, err = tx.AppendStitch(ctx, s); err != nil {
			return err
		}
		return in.enqueueTurn(ctx, tx, threadID)
	})
	if err != nil {
		return nil, fmt.Errorf("add input: %w", err)
	}
	return out, nil
}

// Abort stops a thread: a running turn is cancelled (its heartbeat sees the
// status), nothing it had not yet recorded is recorded, and text confirms
// the stop on the thread's surface. Aborting a finished thread changes
// nothing and reports false.
func (in *Ingester) Abort(ctx context.Context, threadID uuid.UUID, text string) (bool, error) {
	var aborted bool
	err := in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.LockThread(ctx, threadID)
		if err != nil {
			return err
		}
		if !thread.CanTransition(th.Status, thread.StatusAborted) {
			return nil
		}
		if _, err := outbox.Write(ctx, tx, in.jobs, threadID, thread.StopEffects(th.StitchCount, text)); err != nil {
			return err
		}
		aborted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("abort thread %s: %w", threadID, err)
	}
	return aborted, nil
}

func (in *Ingester) enqueueTurn(ctx context.Context, tx *db.Tx, threadID uuid.UUID) error {
	if _, err := in.jobs.InsertTx(ctx, tx.Pgx(), job.Turn{ThreadID: threadID}, nil); err != nil {
		return fmt.Errorf("enqueue turn: %w", err)
	}
	return nil
}
