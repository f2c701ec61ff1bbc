package admission

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1_700_000_000, 0)} }
func (c *clock) intake(limit int) *Intake {
	in := NewIntake(limit, 25*time.Millisecond)
	in.now = c.now
	return in
}

func TestIntakeRefusesPastItsLimit(t *testing.T) {
	t.Parallel()
	c := newClock()
	in := c.intake(2)
	start := c.t
	done1, ok := in.Admit()
	require.True(t, ok)
	require.False(t, in.PressedSince(start), "one of two slots is not pressure")
	done2, ok := in.Admit()
	require.True(t, ok)
	_, ok = in.Admit()
	require.False(t, ok, "a third request while two are worked is refused")
	require.Equal(t, 2, in.InFlight(), "a refused request takes no slot")
	require.True(t, in.PressedSince(start))
	done1()
	done2()
	c.add(time.Second)
	later := c.t
	done, ok := in.Admit()
	require.True(t, ok, "slots given back are taken again")
	done()
	require.False(t, in.PressedSince(later))
}

func TestIntakeSlowRequestPresses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		took    time.Duration
		pressed bool
	}{
		{"fast", 5 * time.Millisecond, false},
		{"at the bound", 25 * time.Millisecond, false},
		{"slow", 26 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			in := c.intake(10)
			start := c.t
			done, ok := in.Admit()
			require.True(t, ok)
			c.add(tc.took)
			done()
			require.Equal(t, tc.pressed, in.PressedSince(start))
		})
	}
}

// gate is a Turns on a hand-moved clock, its intake on the same clock.
func gate(c *clock, maxTurns, floor int) (*Turns, *Intake) {
	in := c.intake(4)
	g := NewTurns(TurnsDeps{Intake: in, Max: maxTurns, Floor: floor, Interval: 100 * time.Millisecond})
	g.now, g.adjusted = c.now, c.t
	return g, in
}

// press makes the intake pressed now: a request that overran its bound.
func press(t *testing.T, c *clock, in *Intake) {
	t.Helper()
	done, ok := in.Admit()
	require.True(t, ok)
	c.add(30 * time.Millisecond)
	done()
}

func TestTurnsYieldToThePressedIntake(t *testing.T) {
	t.Parallel()
	c := newClock()
	g, in := gate(c, 100, 5)
	require.Equal(t, 100, g.Limit(), "a quiet intake leaves every turn worker its turn")
	var limits []int
	for range 6 {
		press(t, c, in)
		c.add(100 * time.Millisecond)
		limits = append(limits, g.Limit())
	}
	require.Equal(t, []int{50, 25, 12, 6, 5, 5}, limits, "halved each pressed interval, down to the floor")
	limits = nil
	for range 3 {
		c.add(100 * time.Millisecond)
		limits = append(limits, g.Limit())
	}
	require.Equal(t, []int{15, 25, 35}, limits, "grown back by a tenth each quiet interval")
	c.add(2 * time.Second)
	require.Equal(t, 100, g.Limit(), "up to the most")
}

func TestTurnsWaitForASlot(t *testing.T) {
	t.Parallel()
	c := newClock()
	g, in := gate(c, 4, 1)
	for _, want := range []int{2, 1} {
		press(t, c, in)
		c.add(100 * time.Millisecond)
		require.Equal(t, want, g.Limit())
	}
	ctx := context.Background()
	release, err := g.Acquire(ctx)
	require.NoError(t, err)

	// A second turn waits while the floor's one runs, and ends with its
	// context.
	waitCtx, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		r, err := g.Acquire(waitCtx)
		if err == nil {
			r()
		}
		got <- err
	}()
	cancel()
	require.ErrorIs(t, <-got, context.Canceled)

	// One waiting when the slot frees takes it.
	go func() {
		r, err := g.Acquire(ctx)
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	require.NoError(t, <-got)
}
