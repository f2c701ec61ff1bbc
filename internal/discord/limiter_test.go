package discord

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// enter queues a waiter of priority p at now, as wait does, and returns it.
func enter(l *windowLimiter, now time.Time, p Priority) *waiter {
	w := &waiter{prio: p, ready: make(chan struct{})}
	l.enterLocked(now, w)
	return w
}

func granted(w *waiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

func TestWindowLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)

	t.Run("BurstThenWindow", func(t *testing.T) {
		t.Parallel()
		l := newWindowLimiter(50, time.Second)
		for range 50 {
			require.True(t, granted(enter(l, t0, PriorityUrgent)))
		}
		w := enter(l, t0, PriorityUrgent)
		require.False(t, granted(w), "the 51st waits for the first to leave the window")
		require.Equal(t, t0.Add(time.Second), l.releaseLocked(t0.Add(999*time.Millisecond)))
		require.False(t, granted(w))
		require.True(t, l.releaseLocked(t0.Add(time.Second)).IsZero(), "nobody left waiting")
		require.True(t, granted(w))
		require.Equal(t, t0.Add(time.Second), w.at)
	})

	t.Run("HigherPriorityFirstThenArrivalOrder", func(t *testing.T) {
		t.Parallel()
		l := newWindowLimiter(2, time.Second)
		enter(l, t0, PriorityNormal)
		enter(l, t0, PriorityNormal)
		var order []string
		queued := map[string]*waiter{
			"background": enter(l, t0, PriorityBackground),
			"normal 1":   enter(l, t0, PriorityNormal),
			"urgent 1":   enter(l, t0, PriorityUrgent),
			"normal 2":   enter(l, t0, PriorityNormal),
		}
		collect := func() {
			for _, name := range []string{"urgent 1", "urgent 2", "normal 1", "normal 2", "background"} {
				if w := queued[name]; w != nil && granted(w) {
					order = append(order, name)
					delete(queued, name)
				}
			}
		}
		l.releaseLocked(t0.Add(time.Second))
		collect()
		require.Equal(t, []string{"urgent 1", "normal 1"}, order)
		// A later urgent request overtakes the normal and background ones
		// still waiting, and does not jump a free slot they wait for.
		queued["urgent 2"] = enter(l, t0.Add(1500*time.Millisecond), PriorityUrgent)
		collect()
		require.Len(t, order, 2, "no slot is free before the next window")
		l.releaseLocked(t0.Add(2 * time.Second))
		collect()
		require.Equal(t, []string{"urgent 1", "normal 1", "urgent 2", "normal 2"}, order)
		l.releaseLocked(t0.Add(3 * time.Second))
		collect()
		require.Equal(t, "background", order[4])
	})

	t.Run("UrgentReserve", func(t *testing.T) {
		t.Parallel()
		l := newWindowLimiter(20, time.Second) // 2 slots reserved
		for range 18 {
			require.True(t, granted(enter(l, t0, PriorityBackground)))
		}
		normal := enter(l, t0, PriorityNormal)
		require.False(t, granted(normal), "the last slots are left to urgent requests")
		require.True(t, granted(enter(l, t0, PriorityUrgent)))
		require.True(t, granted(enter(l, t0, PriorityUrgent)))
		require.False(t, granted(enter(l, t0, PriorityUrgent)), "the window is full")
		require.Equal(t, t0.Add(time.Second), l.releaseLocked(t0.Add(500*time.Millisecond)))
		l.releaseLocked(t0.Add(time.Second))
		require.True(t, granted(normal))
	})

	t.Run("NeverMoreThanNInAnyWindow", func(t *testing.T) {
		t.Parallel()
		l := newWindowLimiter(50, time.Second)
		rng := rand.New(rand.NewPCG(1, 2))
		now := t0
		var all []*waiter
		for range 2000 {
			now = now.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
			l.releaseLocked(now)
			all = append(all, enter(l, now, Priority(rng.IntN(numPriorities))))
		}
		for next := l.releaseLocked(now); !next.IsZero(); next = l.releaseLocked(now) {
			now = next
		}
		var grants []time.Time
		for _, w := range all {
			require.True(t, granted(w))
			grants = append(grants, w.at)
		}
		slices.SortFunc(grants, time.Time.Compare)
		for i := 50; i < len(grants); i++ {
			require.GreaterOrEqual(t, grants[i].Sub(grants[i-50]), time.Second, "grant %d", i)
		}
	})

	t.Run("WaitAndCancel", func(t *testing.T) {
		t.Parallel()
		l := newWindowLimiter(1, 50*time.Millisecond)
		ctx := context.Background()
		require.NoError(t, l.wait(ctx, PriorityNormal))
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, l.wait(cancelled, PriorityUrgent), context.Canceled)
		l.mu.Lock()
		require.Empty(t, l.waiting[PriorityUrgent], "a cancelled waiter leaves the queue")
		l.mu.Unlock()
		// The next slot is granted by the scheduled release.
		require.NoError(t, l.wait(ctx, PriorityBackground))
	})
}
