package discord

import (
	"context"
	"sync"
	"time"
)

// globalRequestLimit per globalRequestWindow enforces Discord's global REST
// limit per bot token, 50 requests per second. The window has a 100 ms
// margin because the limit is counted where requests arrive: a request
// delayed on its way after its grant would otherwise share Discord's second
// with the 50 granted after it (BenchmarkSendRate saw 51 without it). See
// windowLimiter for why a sliding window rather than a token bucket.
const (
	globalRequestLimit  = 50
	globalRequestWindow = time.Second + 100*time.Millisecond
)

// Priority orders the requests waiting for the global limit: when more
// want to go than it allows, the higher priority goes first, and within a
// priority the earlier request.
type Priority int

const (
	// PriorityBackground is catching up: reading a thread's history to
	// find what was missed, joining a thread weft already posts in.
	PriorityBackground Priority = iota
	// PriorityNormal is every request not marked otherwise.
	PriorityNormal
	// PriorityUrgent is a conversation's first sign of life: opening its
	// thread, the notice that tells the asker the answer is coming.
	PriorityUrgent

	numPriorities = 3
)

// priorityKey carries a request's Priority in its context.
type priorityKey struct{}

// WithPriority marks the Discord requests made under ctx with p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf is ctx's Priority, PriorityNormal when unmarked.
func priorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok && p >= 0 && p < numPriorities {
		return p
	}
	return PriorityNormal
}

// urgentReserve is the share of the window's slots only urgent requests
// may take: a slot granted is gone for a whole window, so without it the
// requests of a quiet moment fill the window and the first urgent request
// of a burst waits up to a second for a slot to free.
const urgentReserve = 10 // percent

// windowLimiter grants at most n requests in any window of the given length.
// A token bucket (golang.org/x/time/rate) with burst b lets through up to
// rate+b requests in some one-second windows; Discord counts per window, so a
// sliding log of the last n grant times is the exact rule, and it is a few
// lines without a new module. Requests that cannot go at once queue by
// priority, so that a burst of catch-up reads does not hold up a reply: a
// slot is handed out only when it frees, to the first waiter of the highest
// priority then queued; and requests below urgent leave urgentReserve of the
// slots free.
type windowLimiter struct {
	mu      sync.Mutex
	n       int
	reserve int // of the n, slots only urgent requests take
	window  time.Duration
	grants  []time.Time // ring of the last n grants, oldest at next once full
	next    int
	waiting [numPriorities][]*waiter
	timer   *time.Timer // set while a release is scheduled
}

// waiter is a request queued for a slot.
type waiter struct {
	prio  Priority
	ready chan struct{} // closed once granted
	at    time.Time     // when it was granted
}

// newWindowLimiter returns a limiter of n grants per window.
func newWindowLimiter(n int, window time.Duration) *windowLimiter {
	return &windowLimiter{n: n, reserve: n * urgentReserve / 100, window: window, grants: make([]time.Time, 0, n)}
}

// wait blocks until the request gets a slot or ctx ends. A waiter whose
// context ends leaves the queue; one granted meanwhile leaves its slot
// unused, which only errs on the safe side.
func (l *windowLimiter) wait(ctx context.Context, p Priority) error {
	w := &waiter{prio: p, ready: make(chan struct{})}
	l.mu.Lock()
	now := time.Now()
	if l.enterLocked(now, w) {
		l.mu.Unlock()
		return nil
	}
	l.scheduleLocked(now, l.nextFreeLocked(now, p))
	l.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		l.leaveLocked(w)
		l.mu.Unlock()
		return ctx.Err()
	}
}

// enterLocked grants w at now if a slot is free and nobody of w's priority
// or above is queued, and reports whether it did; otherwise w is queued.
func (l *windowLimiter) enterLocked(now time.Time, w *waiter) bool {
	queued := false
	for p := w.prio; p < numPriorities; p++ {
		queued = queued || len(l.waiting[p]) > 0
	}
	if !queued && l.freeLocked(now, w.prio) {
		l.grantLocked(now, w)
		return true
	}
	l.waiting[w.prio] = append(l.waiting[w.prio], w)
	return false
}

// releaseLocked grants queued waiters, highest priority first, while slots
// are free at now. It returns when the next slot frees if anyone is still
// waiting, else the zero time.
func (l *windowLimiter) releaseLocked(now time.Time) time.Time {
	for p := Priority(numPriorities - 1); p >= 0; p-- {
		for len(l.waiting[p]) > 0 {
			// Lower priorities may not go before this one: its next slot
			// comes first.
			if !l.freeLocked(now, p) {
				return l.nextFreeLocked(now, p)
			}
			w := l.waiting[p][0]
			l.waiting[p][0] = nil
			l.waiting[p] = l.waiting[p][1:]
			l.grantLocked(now, w)
		}
	}
	return time.Time{}
}

// scheduleLocked makes sure a release runs at the latest at `at`, the next
// slot's time; after it, the release schedules the next one itself.
func (l *windowLimiter) scheduleLocked(now, at time.Time) {
	if l.timer != nil || at.IsZero() {
		return
	}
	l.timer = time.AfterFunc(at.Sub(now), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.timer = nil
		now := time.Now()
		l.scheduleLocked(now, l.releaseLocked(now))
	})
}

// leaveLocked takes an ungranted w out of its queue.
func (l *windowLimiter) leaveLocked(w *waiter) {
	q := l.waiting[w.prio]
	for i, x := range q {
		if x == w {
			l.waiting[w.prio] = append(q[:i:i], q[i+1:]...)
			return
		}
	}
}

// limitLocked is how many grants a window may hold for a request of p.
func (l *windowLimiter) limitLocked(p Priority) int {
	if p == PriorityUrgent {
		return l.n
	}
	return l.n - l.reserve
}

// inWindowLocked is the grants still in the window at now, oldest first.
func (l *windowLimiter) inWindowLocked(now time.Time) []time.Time {
	var in []time.Time
	for i := range l.grants {
		// Once full, the ring's oldest grant is at next.
		g := l.grants[(l.next+i)%len(l.grants)]
		if now.Before(g.Add(l.window)) {
			in = append(in, g)
		}
	}
	return in
}

// freeLocked reports whether a grant to p at now keeps the window within
// p's limit.
func (l *windowLimiter) freeLocked(now time.Time, p Priority) bool {
	return len(l.inWindowLocked(now)) < l.limitLocked(p)
}

// nextFreeLocked is when a grant to p is next possible, after now: when
// enough of the window's grants have left it.
func (l *windowLimiter) nextFreeLocked(now time.Time, p Priority) time.Time {
	in := l.inWindowLocked(now)
	over := len(in) - l.limitLocked(p)
	if over < 0 {
		return now
	}
	return in[over].Add(l.window)
}

// grantLocked records a grant to w at now and lets it go.
func (l *windowLimiter) grantLocked(now time.Time, w *waiter) {
	if len(l.grants) < l.n {
		l.grants = append(l.grants, now)
	} else {
		l.grants[l.next] = now
		l.next = (l.next + 1) % l.n
	}
	w.at = now
	close(w.ready)
}
