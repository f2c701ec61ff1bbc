// Package admission decides what a replica takes on when it has more to do
// than it can do well. Inbound events come first: a bounded number are
// worked at once and the rest are refused at once (503 with Retry-After,
// which the platforms retry) rather than queued past their deadline. Turns
// come after them: while the intake is pressed, fewer turns start, down to
// a floor, and their jobs wait in Postgres for this replica or another.
package admission

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Intake bounds the inbound requests a replica works on at once and keeps
// track of when it was last pressed: a request refused, a request that
// took longer than its slow bound, or half the slots in use at once.
type Intake struct {
	limit    int64
	slow     time.Duration
	now      func() time.Time
	inFlight atomic.Int64
	// pressedAt is when the intake was last pressed, in Unix nanoseconds.
	pressedAt atomic.Int64
}

// NewIntake returns an Intake working at most limit requests at once, and
// taking one that lasted longer than slow as a sign it is pressed.
func NewIntake(limit int, slow time.Duration) *Intake {
	return &Intake{limit: int64(max(1, limit)), slow: slow, now: time.Now}
}

// Admit takes a slot for one request: done gives it back once the request
// is answered. With every slot taken it reports false, and the caller
// refuses the request.
func (in *Intake) Admit() (done func(), ok bool) {
	now := in.now()
	n := in.inFlight.Add(1)
	if n > in.limit {
		in.inFlight.Add(-1)
		in.press(now)
		return nil, false
	}
	if 2*n > in.limit {
		in.press(now)
	}
	return func() {
		in.inFlight.Add(-1)
		if end := in.now(); end.Sub(now) > in.slow {
			in.press(end)
		}
	}, true
}

func (in *Intake) press(at time.Time) { in.pressedAt.Store(at.UnixNano()) }

// InFlight is how many requests are being worked on now.
func (in *Intake) InFlight() int { return int(in.inFlight.Load()) }

// PressedSince reports whether the intake was pressed at t or later.
func (in *Intake) PressedSince(t time.Time) bool { return in.pressedAt.Load() >= t.UnixNano() }

// Turns bounds the turns a replica runs at once, and yields to the intake:
// for each interval in which the intake was pressed the bound halves, down
// to floor; for each one in which it was not, it grows by a tenth of max,
// up to max. A turn waiting for a slot holds no connection and writes
// nothing.
type Turns struct {
	intake   *Intake
	max      int
	floor    int
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	limit    int
	running  int
	adjusted time.Time
	// freed is closed, and replaced, when a slot frees or the bound grows.
	freed chan struct{}
}

// TurnsDeps is what a Turns gate is built from.
type TurnsDeps struct {
	Intake *Intake
	// Max turns run at once, and at least Floor of them whatever the
	// intake's pressure, which the gate looks at every Interval.
	Max, Floor int
	Interval   time.Duration
}

// NewTurns returns a gate for d.Max turns at once.
func NewTurns(d TurnsDeps) *Turns {
	maxTurns := max(1, d.Max)
	return &Turns{intake: d.Intake, max: maxTurns, floor: min(max(1, d.Floor), maxTurns), interval: d.Interval, now: time.Now,
		limit: maxTurns, adjusted: time.Now(), freed: make(chan struct{})}
}

// Acquire waits for a turn's slot until ctx ends; release gives it back.
func (t *Turns) Acquire(ctx context.Context) (release func(), err error) {
	for {
		t.mu.Lock()
		t.adjust()
		if t.running < t.limit {
			t.running++
			t.mu.Unlock()
			return t.release, nil
		}
		freed := t.freed
		t.mu.Unlock()
		// The bound is adjusted by whoever looks next: a waiter looks
		// again after an interval even when no slot frees.
		timer := time.NewTimer(t.interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-freed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// Limit is the bound now.
func (t *Turns) Limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.adjust()
	return t.limit
}

func (t *Turns) release() {
	t.mu.Lock()
	t.running--
	t.wake()
	t.mu.Unlock()
}

// adjust moves the bound once an interval has passed since it last did,
// by whether the intake was pressed since. t.mu is held.
func (t *Turns) adjust() {
	now := t.now()
	periods := int(now.Sub(t.adjusted) / t.interval)
	if periods < 1 {
		return
	}
	since := t.adjusted
	t.adjusted = now
	if t.intake.PressedSince(since) {
		t.limit = max(t.floor, t.limit/2)
		return
	}
	if grown := min(t.max, t.limit+periods*max(1, t.max/10)); grown > t.limit {
		t.limit = grown
		t.wake()
	}
}

// wake tells the waiters to look again. t.mu is held.
func (t *Turns) wake() {
	close(t.freed)
	t.freed = make(chan struct{})
}
