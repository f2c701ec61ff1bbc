package discord

import (
	"context"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/retry"
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

// windowLimiter grants at most n requests in any window of the given length.
// A token bucket (golang.org/x/time/rate) with burst b lets through up to
// rate+b requests in some one-second windows; Discord counts per window, so a
// sliding log of the last n grant times is the exact rule, and it is a few
// lines without a new module. Grants are reservations: a caller whose context
// ends while waiting leaves its slot unused, which only errs on the safe side.
type windowLimiter struct {
	mu     sync.Mutex
	n      int
	window time.Duration
	grants []time.Time // ring of the last n grants, oldest at next once full
	next   int
	last   time.Time
}

// newWindowLimiter returns a limiter of n grants per window.
func newWindowLimiter(n int, window time.Duration) *windowLimiter {
	return &windowLimiter{n: n, window: window, grants: make([]time.Time, 0, n)}
}

// reserve books the earliest slot at or after now and returns its time.
// Slots are handed out in order, so grant k is never earlier than grant k-n
// plus the window.
func (l *windowLimiter) reserve(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := now
	if at.Before(l.last) {
		at = l.last
	}
	if len(l.grants) < l.n {
		l.grants = append(l.grants, at)
	} else {
		if earliest := l.grants[l.next].Add(l.window); at.Before(earliest) {
			at = earliest
		}
		l.grants[l.next] = at
		l.next = (l.next + 1) % l.n
	}
	l.last = at
	return at
}

// wait blocks until a slot is free or ctx ends.
func (l *windowLimiter) wait(ctx context.Context) error {
	now := time.Now()
	return retry.Sleep(ctx, l.reserve(now).Sub(now))
}
