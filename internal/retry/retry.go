// Package retry is weft's one retry loop: an operation runs again after a
// failure another try may fix, a bounded number of times, waiting an
// exponential backoff with jitter or what the server asked for
// (Retry-After), never longer than the caller allows or its context lasts.
// The LLM providers, the platform clients and get-thread-replies retry
// through Do; the delivery jobs, which River retries, take their schedule
// from Backoff.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Backoff is an exponential schedule: Base, doubled for each later retry,
// capped at Max, plus up to Jitter of itself at random, so that replicas
// that failed together do not retry together.
type Backoff struct {
	Base time.Duration
	// Max caps the doubled delay, before jitter; zero leaves it uncapped.
	Max time.Duration
	// Jitter is the most added at random, as a fraction of the delay: 0.5
	// adds up to half again, 0 none.
	Jitter float64
}

// Delay is the delay before retry n (1 for the first), without jitter.
func (b Backoff) Delay(n int) time.Duration {
	d := max(b.Base, 0)
	for i := 1; i < n && d > 0 && d <= math.MaxInt64/2 && (b.Max <= 0 || d < b.Max); i++ {
		d *= 2
	}
	if b.Max > 0 {
		d = min(d, b.Max)
	}
	return d
}

// Jittered is Delay(n) plus its random share.
func (b Backoff) Jittered(n int) time.Duration {
	d := b.Delay(n)
	if j := time.Duration(float64(d) * b.Jitter); j > 0 {
		d += rand.N(j + 1)
	}
	return d
}

// Hinter is a failure that says when to try again, as a server's
// Retry-After does. A positive hint replaces the backoff.
type Hinter interface {
	RetryHint() time.Duration
}

// Hint is the wait err asks for: the hint of the first Hinter in its chain,
// or zero.
func Hint(err error) time.Duration {
	var h Hinter
	if errors.As(err, &h) {
		return h.RetryHint()
	}
	return 0
}

// ErrInterrupted marks a loop whose context ended while it waited to retry.
// The error Do returns then wraps it, the context's cause and the last
// failure.
var ErrInterrupted = errors.New("waiting to retry")

// Policy is how an operation is retried.
type Policy struct {
	// Attempts is how often the operation runs at most, the first included;
	// less than 1 means 1.
	Attempts int
	Backoff  Backoff
	// MaxWait is the longest wait the loop takes on, a hint included: a
	// longer one (a spent quota, a ban) ends the loop with the failure, for
	// the caller to reschedule rather than hold a worker. Zero: no limit.
	// A wait that would outlast the context's deadline ends it too.
	MaxWait time.Duration
	// Retryable says whether a failure may succeed if repeated; nil retries
	// every failure.
	Retryable func(error) bool
	// OnRetry, when set, hears of each retry before its wait, for logs.
	// attempt is the one that failed (1 for the first).
	OnRetry func(attempt int, wait time.Duration, err error)
	// Sleep waits for d or until ctx ends; nil is a timer. Tests record the
	// waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
}

type onceKey struct{}

// Once marks ctx so that every Do under it runs its operation once: for a
// caller that counts and schedules attempts itself, such as the outbox,
// whose rows have one budget of attempts whatever layer below would retry.
func Once(ctx context.Context) context.Context { return context.WithValue(ctx, onceKey{}, true) }

// Do runs op until it succeeds, fails in a way the policy does not retry,
// or has run Attempts times (once under a context marked by Once), and
// returns its last result. A wait its context ends returns an error
// wrapping ErrInterrupted.
func Do[T any](ctx context.Context, p Policy, op func(context.Context) (T, error)) (T, error) {
	sleep := p.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	attempts := p.Attempts
	if once, _ := ctx.Value(onceKey{}).(bool); once {
		attempts = 1
	}
	for attempt := 1; ; attempt++ {
		v, err := op(ctx)
		if err == nil || attempt >= attempts || p.Retryable != nil && !p.Retryable(err) {
			return v, err
		}
		wait := Hint(err)
		if wait <= 0 {
			wait = p.Backoff.Jittered(attempt)
		}
		if p.MaxWait > 0 && wait > p.MaxWait {
			return v, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return v, err
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt, wait, err)
		}
		if serr := sleep(ctx, wait); serr != nil {
			var zero T
			return zero, fmt.Errorf("%w: %w (last error: %w)", ErrInterrupted, context.Cause(ctx), err)
		}
	}
}

// Sleep waits for d or until ctx ends, whichever comes first, and returns
// the context's error if it ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
