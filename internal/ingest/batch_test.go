package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// recorder is an openings.open that holds each batch until released and
// records which sessions went together; a batch led by panicOn panics.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	started chan struct{}
	release chan struct{}
	panicOn string
}

func (r *recorder) open(_ context.Context, batch []*opening) {
	var ids []string
	for _, o := range batch {
		ids = append(ids, o.ev.Conversation.Conversation())
	}
	r.mu.Lock()
	r.batches = append(r.batches, ids)
	r.mu.Unlock()
	r.started <- struct{}{}
	<-r.release
	if ids[0] == r.panicOn {
		panic("opening failed")
	}
	for _, o := range batch {
		o.th = &thread.Thread{Goal: o.ev.Conversation.Conversation()}
	}
}

func newOpening(ctx context.Context, id string) *opening {
	return &opening{ctx: ctx, ev: surface.Event{Conversation: &thread.LinearAttachment{SessionID: id}}}
}

// rig is openings with max slots over a recorder, and its callers.
type rig struct {
	*recorder
	q  *openings
	wg sync.WaitGroup
}

func newRig(max int) *rig {
	r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
	return &rig{recorder: r, q: &openings{max: max, open: r.open}}
}

// call makes o's caller, in a goroutine of its own.
func (g *rig) call(o *opening) { g.wg.Go(func() { g.q.do(o) }) }

// running calls o and waits until its batch is in flight.
func (g *rig) running(o *opening) {
	g.call(o)
	<-g.started
}

// queued calls o and waits until it is the nth caller in the queue.
func (g *rig) queued(t *testing.T, o *opening, n int) {
	t.Helper()
	g.call(o)
	queued(t, g.q, n)
}

// queued waits until n callers wait in q.
func queued(t *testing.T, q *openings, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queue) == n
	}, 5*time.Second, time.Millisecond)
}

func TestOpenings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("QueuedCallersShareTheNextBatch", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		results := make(map[string]*opening)
		for i, id := range []string{"a", "b", "c", "d"} {
			o := newOpening(ctx, id)
			results[id] = o
			if i == 0 {
				g.running(o) // a's batch is in flight: the one slot is taken
				continue
			}
			g.queued(t, o, i)
		}
		g.release <- struct{}{} // a finishes; b leads c and d
		<-g.started
		g.release <- struct{}{}
		g.wg.Wait()

		require.Equal(t, [][]string{{"a"}, {"b", "c", "d"}}, g.batches)
		for id, o := range results {
			require.NoError(t, o.err)
			require.Equal(t, id, o.th.Goal, "each caller gets its own result")
		}
		require.Zero(t, g.q.inFlight)
	})

	t.Run("FreeSlotsRunAtOnce", func(t *testing.T) {
		t.Parallel()
		g := newRig(2)
		g.running(newOpening(ctx, "a"))
		g.running(newOpening(ctx, "b"))
		close(g.release)
		g.wg.Wait()
		require.ElementsMatch(t, [][]string{{"a"}, {"b"}}, g.batches)
	})

	t.Run("ACallerThatGivesUpLeavesTheQueue", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		g.running(newOpening(ctx, "a"))
		gctx, cancel := context.WithCancel(ctx)
		gone := newOpening(gctx, "gone")
		g.queued(t, gone, 1)
		cancel()
		queued(t, g.q, 0)
		close(g.release)
		g.wg.Wait()

		require.ErrorIs(t, gone.err, context.Canceled)
		require.Nil(t, gone.th)
		require.Equal(t, [][]string{{"a"}}, g.batches)
		require.Zero(t, g.q.inFlight)
	})

	t.Run("ACallerTakenIntoABatchIsAnsweredByIt", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		g.running(newOpening(ctx, "a"))
		g.queued(t, newOpening(ctx, "b"), 1)
		gctx, cancel := context.WithCancel(ctx)
		taken := newOpening(gctx, "c")
		g.queued(t, taken, 2)
		g.release <- struct{}{} // a finishes; b's batch takes c
		<-g.started
		cancel() // c gives up while its batch writes it
		g.release <- struct{}{}
		g.wg.Wait()

		require.Equal(t, [][]string{{"a"}, {"b", "c"}}, g.batches)
		require.NoError(t, taken.err, "written, so answered as written")
		require.Equal(t, "c", taken.th.Goal)
	})

	t.Run("ACallerOutOfTimeIsNotWritten", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		g.running(newOpening(ctx, "a"))
		g.queued(t, newOpening(ctx, "b"), 1)
		// Out of time as the batch takes it: the ctx check in do has not
		// seen it yet, as when the batch is first to the lock.
		lctx, cancel := context.WithCancel(ctx)
		late := newOpening(lctx, "late")
		g.q.mu.Lock()
		late.prepare()
		g.q.queue = append(g.q.queue, late)
		g.q.mu.Unlock()
		cancel()
		close(g.release)
		g.wg.Wait()
		<-late.done

		require.ErrorIs(t, late.err, context.Canceled)
		require.Nil(t, late.th)
		require.Equal(t, [][]string{{"a"}, {"b"}}, g.batches, "not written")
	})

	t.Run("ACallerNearlyOutOfTimeIsNotWritten", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		close(g.release)
		soon, cancel := context.WithTimeout(ctx, minTimeLeft/2)
		defer cancel()
		o := newOpening(soon, "soon")
		g.q.do(o)
		require.ErrorIs(t, o.err, context.DeadlineExceeded)
		require.Empty(t, g.batches, "not written")

		ample, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		o = newOpening(ample, "ample")
		g.q.do(o)
		require.NoError(t, o.err)
		require.Equal(t, [][]string{{"ample"}}, g.batches)
	})

	t.Run("BatchesAreCapped", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		g.running(newOpening(ctx, "first"))
		for range maxBatch + 1 {
			g.call(newOpening(ctx, "queued"))
		}
		queued(t, g.q, maxBatch+1)
		close(g.release)
		g.wg.Wait()

		require.Len(t, g.batches, 3)
		require.Len(t, g.batches[1], maxBatch)
		require.Len(t, g.batches[2], 1)
	})

	t.Run("APanicFailsTheBatchAndFreesTheSlot", func(t *testing.T) {
		t.Parallel()
		g := newRig(1)
		g.panicOn = "b"
		g.running(newOpening(ctx, "a"))
		var panicked any
		g.wg.Go(func() {
			defer func() { panicked = recover() }()
			g.q.do(newOpening(ctx, "b"))
		})
		queued(t, g.q, 1)
		follower := newOpening(ctx, "c")
		g.queued(t, follower, 2)
		g.release <- struct{}{} // a finishes; b leads c, and panics
		<-g.started
		g.release <- struct{}{}
		g.wg.Wait()
		require.Equal(t, "opening failed", panicked)
		require.Equal(t, [][]string{{"a"}, {"b", "c"}}, g.batches)
		require.ErrorIs(t, follower.err, errAbandoned)

		after := newOpening(ctx, "d")
		g.running(after)
		close(g.release)
		g.wg.Wait()
		require.NoError(t, after.err)
		require.Zero(t, g.q.inFlight)
	})
}

func TestBatchContextEndsByTheFirstDeadline(t *testing.T) {
	t.Parallel()
	soon, cancelSoon := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSoon()
	later, cancelLater := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLater()

	ctx, cancel := batchContext([]*opening{{ctx: later}, {ctx: soon}, {ctx: context.Background()}})
	defer cancel()
	want, _ := soon.Deadline()
	got, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, want, got)

	cancelSoon() // one caller giving up does not end the others' write
	require.NoError(t, ctx.Err())

	ctx, cancel = batchContext([]*opening{{ctx: context.Background()}})
	defer cancel()
	_, ok = ctx.Deadline()
	require.False(t, ok)
}
