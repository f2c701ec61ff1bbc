package kit

import (
	"context"
	"time"

	"github.com/weft-dev/weft/internal/retry"
)

// Pace calls send n times, open-loop, the i-th at i/rate seconds after the
// start however long the earlier ones took, and returns the most a call
// started behind its time (the generator's lag).
func Pace(ctx context.Context, rate, n int, send func(i int) error) (time.Duration, error) {
	return pace(ctx, rate, func(i int, _ time.Time) bool { return i < n }, send)
}

// PaceFor is Pace for d rather than n calls.
func PaceFor(ctx context.Context, rate int, d time.Duration, send func(i int) error) (time.Duration, error) {
	return pace(ctx, rate, func(_ int, start time.Time) bool { return time.Since(start) < d }, send)
}

func pace(ctx context.Context, rate int, more func(i int, start time.Time) bool, send func(i int) error) (time.Duration, error) {
	var lag time.Duration
	start := time.Now()
	for i := 0; more(i, start); i++ {
		sched := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if err := retry.Sleep(ctx, time.Until(sched)); err != nil {
			return lag, err
		}
		lag = max(lag, time.Since(sched))
		if err := send(i); err != nil {
			return lag, err
		}
	}
	return lag, nil
}
