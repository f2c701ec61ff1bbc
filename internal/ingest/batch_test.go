package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
		ids = append(ids, o.s.Attachment.SessionID)
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
		o.th = &thread.Thread{Goal: o.s.Attachment.SessionID}
	}
}

func newOpening(ctx context.Context, id string) *opening {
	return &opening{ctx: ctx, s: LinearSession{Attachment: thread.LinearAttachment{SessionID: id}}}
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
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		results := make(map[string]*opening)
		call := func(id string) {
			o := newOpening(ctx, id)
			results[id] = o
			wg.Go(func() { q.do(o) })
		}
		call("a")
		<-r.started // a's batch is in flight: the one slot is taken
		for i, id := range []string{"b", "c", "d"} {
			call(id)
			queued(t, q, i+1)
		}
		r.release <- struct{}{} // a finishes; b leads c and d
		<-r.started
		r.release <- struct{}{}
		wg.Wait()

		require.Equal(t, [][]string{{"a"}, {"b", "c", "d"}}, r.batches)
		for id, o := range results {
			require.NoError(t, o.err)
			require.Equal(t, id, o.th.Goal, "each caller gets its own result")
		}
		require.Zero(t, q.inFlight)
	})

	t.Run("FreeSlotsRunAtOnce", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 2, open: r.open}
		var wg sync.WaitGroup
		for _, id := range []string{"a", "b"} {
			wg.Go(func() { q.do(newOpening(ctx, id)) })
			<-r.started
		}
		close(r.release)
		wg.Wait()
		require.ElementsMatch(t, [][]string{{"a"}, {"b"}}, r.batches)
	})

	t.Run("ACallerThatGivesUpLeavesTheQueue", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		wg.Go(func() { q.do(newOpening(ctx, "a")) })
		<-r.started
		gctx, cancel := context.WithCancel(ctx)
		gone := newOpening(gctx, "gone")
		wg.Go(func() { q.do(gone) })
		queued(t, q, 1)
		cancel()
		queued(t, q, 0)
		close(r.release)
		wg.Wait()

		require.ErrorIs(t, gone.err, context.Canceled)
		require.Nil(t, gone.th)
		require.Equal(t, [][]string{{"a"}}, r.batches)
		require.Zero(t, q.inFlight)
	})

	t.Run("ACallerTakenIntoABatchIsAnsweredByIt", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		wg.Go(func() { q.do(newOpening(ctx, "a")) })
		<-r.started
		wg.Go(func() { q.do(newOpening(ctx, "b")) })
		queued(t, q, 1)
		gctx, cancel := context.WithCancel(ctx)
		taken := newOpening(gctx, "c")
		wg.Go(func() { q.do(taken) })
		queued(t, q, 2)
		r.release <- struct{}{} // a finishes; b's batch takes c
		<-r.started
		cancel() // c gives up while its batch writes it
		r.release <- struct{}{}
		wg.Wait()

		require.Equal(t, [][]string{{"a"}, {"b", "c"}}, r.batches)
		require.NoError(t, taken.err, "written, so answered as written")
		require.Equal(t, "c", taken.th.Goal)
	})

	t.Run("ACallerOutOfTimeIsNotWritten", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		wg.Go(func() { q.do(newOpening(ctx, "a")) })
		<-r.started
		wg.Go(func() { q.do(newOpening(ctx, "b")) })
		queued(t, q, 1)
		late := newOpening(ctx, "late")
		// Out of time as the batch takes it: the ctx check in do has not
		// seen it yet, as when the batch is first to the lock.
		lctx, cancel := context.WithCancel(ctx)
		late.ctx = lctx
		q.mu.Lock()
		late.prepare()
		q.queue = append(q.queue, late)
		q.mu.Unlock()
		cancel()
		close(r.release)
		wg.Wait()
		<-late.done

		require.ErrorIs(t, late.err, context.Canceled)
		require.Nil(t, late.th)
		require.Equal(t, [][]string{{"a"}, {"b"}}, r.batches, "not written")
	})

	t.Run("ACallerNearlyOutOfTimeIsNotWritten", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		close(r.release)
		q := &openings{max: 1, open: r.open}
		soon, cancel := context.WithTimeout(ctx, minTimeLeft/2)
		defer cancel()
		o := newOpening(soon, "soon")
		q.do(o)
		require.ErrorIs(t, o.err, context.DeadlineExceeded)
		require.Empty(t, r.batches, "not written")

		ample, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		o = newOpening(ample, "ample")
		q.do(o)
		require.NoError(t, o.err)
		require.Equal(t, [][]string{{"ample"}}, r.batches)
	})

	t.Run("BatchesAreCapped", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{})}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		wg.Go(func() { q.do(newOpening(ctx, "first")) })
		<-r.started
		for range maxBatch + 1 {
			wg.Go(func() { q.do(newOpening(ctx, "queued")) })
		}
		queued(t, q, maxBatch+1)
		close(r.release)
		wg.Wait()

		require.Len(t, r.batches, 3)
		require.Len(t, r.batches[1], maxBatch)
		require.Len(t, r.batches[2], 1)
	})

	t.Run("APanicFailsTheBatchAndFreesTheSlot", func(t *testing.T) {
		t.Parallel()
		r := &recorder{started: make(chan struct{}, 8), release: make(chan struct{}), panicOn: "b"}
		q := &openings{max: 1, open: r.open}
		var wg sync.WaitGroup
		wg.Go(func() { q.do(newOpening(ctx, "a")) })
		<-r.started
		var panicked any
		wg.Go(func() {
			defer func() { panicked = recover() }()
			q.do(newOpening(ctx, "b"))
		})
		queued(t, q, 1)
		follower := newOpening(ctx, "c")
		wg.Go(func() { q.do(follower) })
		queued(t, q, 2)
		r.release <- struct{}{} // a finishes; b leads c, and panics
		<-r.started
		r.release <- struct{}{}
		wg.Wait()
		require.Equal(t, "opening failed", panicked)
		require.Equal(t, [][]string{{"a"}, {"b", "c"}}, r.batches)
		require.ErrorIs(t, follower.err, errAbandoned)

		after := newOpening(ctx, "d")
		wg.Go(func() { q.do(after) })
		<-r.started
		close(r.release)
		wg.Wait()
		require.NoError(t, after.err)
		require.Zero(t, q.inFlight)
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
