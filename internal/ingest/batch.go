package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// maxBatch caps the threads one transaction opens: its statements go in
// one round trip, and one River insert takes all their jobs.
const maxBatch = 64

// minTimeLeft is the least time a caller must have left to be written: a
// batch ends by its callers' first deadline, and one about to expire would
// cut the others' write short. A batch takes milliseconds; a caller with
// less left than this has waited long already and is answered at once.
const minTimeLeft = 250 * time.Millisecond

// errTooLate answers a caller with less than minTimeLeft.
var errTooLate = fmt.Errorf("ingest: too little time left to write the session: %w", context.DeadlineExceeded)

// opening is one new thread (an Open event) waiting for the transaction
// that makes it.
type opening struct {
	ctx   context.Context
	d     thread.Inbound
	ev    surface.Event
	draft *thread.Draft

	lead chan struct{} // closed when this caller is to run the next batch
	done chan struct{} // closed when th, ack and err are set (settle)
	// settled is set once done is closed; only the goroutine running the
	// caller's batch touches it.
	settled bool

	th *thread.Thread
	// ack is the written Ack, for its express send; nil without one.
	ack *thread.Outbox
	err error
}

// settle releases o's caller, whose result is set.
func (o *opening) settle() {
	if !o.settled {
		o.settled = true
		close(o.done)
	}
}

// openings groups concurrent new sessions into shared transactions. A
// session is opened at once while fewer than max transactions are in
// flight; past that it waits, and the next transaction to start takes it
// with everything else that queued meanwhile. Under light load each
// session is its own transaction, as before; under a burst one begin, one
// round trip of statements, one job insert and one commit (one WAL flush)
// serve many, which is what lets a webhook's cost fall as the rate rises.
type openings struct {
	max int
	// open makes the sessions of one batch and sets each one's result.
	open func(ctx context.Context, batch []*opening)

	mu       sync.Mutex
	inFlight int
	queue    []*opening
}

// prepare readies o to be queued or run.
func (o *opening) prepare() { o.lead, o.done = make(chan struct{}), make(chan struct{}) }

// do opens o's session, in a transaction of its own or in a batch, and
// returns when o's result is set.
func (q *openings) do(o *opening) {
	o.prepare()
	q.mu.Lock()
	if q.inFlight < q.max {
		q.inFlight++
		q.mu.Unlock()
		q.run(o)
		return
	}
	q.queue = append(q.queue, o)
	q.mu.Unlock()

	select {
	case <-o.done:
		return
	case <-o.lead:
		q.run(o)
		return
	case <-o.ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(q.queue, o); i >= 0 {
		q.queue = slices.Delete(q.queue, i, i+1)
		q.mu.Unlock()
		o.err = o.ctx.Err()
		return
	}
	q.mu.Unlock()
	// Taken by a batch, or promoted to run one: either way it is owed.
	select {
	case <-o.done:
	case <-o.lead:
		q.run(o)
	}
}

// run opens a batch of o and whatever queued (up to maxBatch), and hands
// the next batch to the first caller still queued. open settles each
// caller as soon as its result is final; finish settles the rest.
func (q *openings) run(o *opening) {
	q.mu.Lock()
	n := min(len(q.queue), maxBatch-1)
	taken := append([]*opening{o}, q.queue[:n]...)
	q.queue = slices.Delete(q.queue, 0, n)
	q.mu.Unlock()
	// Deferred, so that a panic in open fails the others and frees the
	// slot instead of leaving them waiting for good.
	defer q.finish(taken)

	// A caller whose time ran out, or nearly, while it queued gets that as
	// its answer rather than cutting the others' write short.
	batch := make([]*opening, 0, len(taken))
	for _, b := range taken {
		if b.err = b.ctx.Err(); b.err != nil {
			continue
		}
		if d, ok := b.ctx.Deadline(); ok && time.Until(d) < minTimeLeft {
			b.err = errTooLate
			continue
		}
		batch = append(batch, b)
	}
	if len(batch) == 0 {
		return
	}
	ctx, cancel := batchContext(batch)
	defer cancel()
	q.open(ctx, batch)
}

// errAbandoned is the result of a session whose batch ended without
// setting it (a panic while opening).
var errAbandoned = errors.New("ingest: the batch opening this session was abandoned")

// finish settles the callers of batch open did not, and passes the
// batch's slot on.
func (q *openings) finish(batch []*opening) {
	for _, b := range batch {
		if b.th == nil && b.err == nil {
			b.err = errAbandoned
		}
		b.settle()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.inFlight--
		return
	}
	next := q.queue[0]
	q.queue = q.queue[1:]
	close(next.lead)
}

// batchContext is the context a batch runs under: one caller giving up
// does not end the others' write, and the write ends by the first of their
// deadlines, so that every caller is answered within its own.
func batchContext(batch []*opening) (context.Context, context.CancelFunc) {
	var first time.Time
	for _, o := range batch {
		if d, ok := o.ctx.Deadline(); ok && (first.IsZero() || d.Before(first)) {
			first = d
		}
	}
	ctx := context.WithoutCancel(batch[0].ctx)
	if first.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, first)
}
