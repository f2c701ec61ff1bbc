package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/retry"
)

// failure is an operation's error; hint, when set, is its Retry-After.
type failure struct {
	transient bool
	hint      time.Duration
}

func (f *failure) Error() string            { return fmt.Sprintf("failure (transient %v)", f.transient) }
func (f *failure) RetryHint() time.Duration { return f.hint }

var (
	transient = &failure{transient: true}
	permanent = &failure{}
	// twoHours and twoMinutes are transient failures whose server asks for a
	// long wait.
	twoHours   = &failure{transient: true, hint: 2 * time.Hour}
	twoMinutes = &failure{transient: true, hint: 2 * time.Minute}
)

func retryable(err error) bool {
	var f *failure
	return errors.As(err, &f) && f.transient
}

func TestDo(t *testing.T) {
	t.Parallel()
	backoff := retry.Backoff{Base: time.Second, Max: 3 * time.Second}
	tests := []struct {
		name     string
		policy   retry.Policy
		failures []error // what the attempts fail with, in order; then success
		ctx      func() (context.Context, context.CancelFunc)
		calls    int
		waits    []time.Duration
		wantErr  error // nil: success
	}{
		{name: "FirstTry", policy: retry.Policy{Attempts: 3, Backoff: backoff, Retryable: retryable},
			calls: 1},
		{name: "TransientThenSuccess", policy: retry.Policy{Attempts: 3, Backoff: backoff, Retryable: retryable},
			failures: []error{transient, transient}, calls: 3, waits: []time.Duration{time.Second, 2 * time.Second}},
		{name: "AttemptsSpent", policy: retry.Policy{Attempts: 3, Backoff: backoff, Retryable: retryable},
			failures: []error{transient, transient, transient, transient}, calls: 3,
			waits: []time.Duration{time.Second, 2 * time.Second}, wantErr: transient},
		{name: "BackoffCapped", policy: retry.Policy{Attempts: 4, Backoff: backoff},
			failures: []error{transient, transient, transient}, calls: 4,
			waits: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{name: "PermanentIsNotRetried", policy: retry.Policy{Attempts: 3, Backoff: backoff, Retryable: retryable},
			failures: []error{permanent}, calls: 1, wantErr: permanent},
		{name: "NilClassifierRetriesAll", policy: retry.Policy{Attempts: 2, Backoff: backoff},
			failures: []error{permanent}, calls: 2, waits: []time.Duration{time.Second}},
		{name: "ZeroAttemptsIsOne", policy: retry.Policy{Backoff: backoff},
			failures: []error{transient}, calls: 1, wantErr: transient},
		{name: "RetryAfterReplacesBackoff", policy: retry.Policy{Attempts: 3, Backoff: backoff, Retryable: retryable},
			failures: []error{&failure{transient: true, hint: 7 * time.Second}, transient}, calls: 3,
			waits: []time.Duration{7 * time.Second, 2 * time.Second}},
		{name: "RetryAfterWrappedIsFound", policy: retry.Policy{Attempts: 2, Backoff: backoff},
			failures: []error{fmt.Errorf("call: %w", &failure{transient: true, hint: 5 * time.Second})}, calls: 2,
			waits: []time.Duration{5 * time.Second}},
		{name: "RetryAfterBeyondMaxWait", policy: retry.Policy{Attempts: 3, Backoff: backoff, MaxWait: time.Minute, Retryable: retryable},
			failures: []error{twoMinutes}, calls: 1, wantErr: twoMinutes},
		{name: "BackoffBeyondMaxWait", policy: retry.Policy{Attempts: 3, Backoff: backoff, MaxWait: 1500 * time.Millisecond},
			failures: []error{transient, transient}, calls: 2, waits: []time.Duration{time.Second}, wantErr: transient},
		{name: "WaitBeyondDeadline", policy: retry.Policy{Attempts: 3, Backoff: backoff},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Hour)
			},
			failures: []error{twoHours}, calls: 1, wantErr: twoHours},
		{name: "ContextEndsTheWait", policy: retry.Policy{Attempts: 3, Backoff: backoff},
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, func() {}
			},
			failures: []error{transient}, calls: 1, waits: []time.Duration{time.Second}, wantErr: retry.ErrInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			var waits []time.Duration
			var heard []int
			p := tt.policy
			p.Sleep = func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return ctx.Err()
			}
			p.OnRetry = func(attempt int, wait time.Duration, err error) {
				heard = append(heard, attempt)
				require.Error(t, err)
			}
			calls := 0
			got, err := retry.Do(ctx, p, func(context.Context) (string, error) {
				calls++
				if calls <= len(tt.failures) {
					return "", tt.failures[calls-1]
				}
				return "done", nil
			})
			require.Equal(t, tt.calls, calls)
			require.Equal(t, tt.waits, waits)
			require.Len(t, heard, len(tt.waits), "OnRetry hears of every wait")
			if tt.wantErr == nil {
				require.NoError(t, err)
				require.Equal(t, "done", got)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestDoInterrupted(t *testing.T) {
	t.Parallel()
	cause := errors.New("stopping")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := retry.Do(ctx, retry.Policy{Attempts: 2}, func(context.Context) (int, error) { return 0, transient })
	require.ErrorIs(t, err, retry.ErrInterrupted)
	require.ErrorIs(t, err, cause, "the context's cause")
	require.ErrorIs(t, err, transient, "the last failure")
	require.Equal(t, "waiting to retry: stopping (last error: failure (transient true))", err.Error())
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    retry.Backoff
		want []time.Duration // Delay(1), Delay(2), ...
	}{
		{"Doubles", retry.Backoff{Base: 250 * time.Millisecond}, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"Capped", retry.Backoff{Base: time.Minute, Max: 10 * time.Minute}, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}},
		{"Zero", retry.Backoff{}, []time.Duration{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, want := range tt.want {
				require.Equal(t, want, tt.b.Delay(i+1), "retry %d", i+1)
			}
		})
	}

	t.Run("NeverOverflows", func(t *testing.T) {
		t.Parallel()
		require.Positive(t, retry.Backoff{Base: time.Second}.Delay(500))
		require.Equal(t, 30*time.Second, retry.Backoff{Base: time.Second, Max: 30 * time.Second}.Delay(500))
	})

	t.Run("JitterStaysInBounds", func(t *testing.T) {
		t.Parallel()
		b := retry.Backoff{Base: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5}
		for n := 1; n <= 6; n++ {
			for range 100 {
				d, got := b.Delay(n), b.Jittered(n)
				require.GreaterOrEqual(t, got, d, "retry %d", n)
				require.LessOrEqual(t, got, d+d/2, "retry %d", n)
			}
		}
		require.Equal(t, time.Second, retry.Backoff{Base: time.Second}.Jittered(1), "no jitter, no randomness")
	})
}

func TestHint(t *testing.T) {
	t.Parallel()
	require.Zero(t, retry.Hint(errors.New("plain")))
	require.Equal(t, time.Second, retry.Hint(fmt.Errorf("wrapped: %w", &failure{hint: time.Second})))
}

func TestSleepEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, retry.Sleep(ctx, time.Hour), context.Canceled)
	require.NoError(t, retry.Sleep(context.Background(), 0))
}

// Under Once a policy of many attempts makes one: the caller retries.
func TestDoOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	_, err := retry.Do(retry.Once(context.Background()), retry.Policy{Attempts: 5}, func(context.Context) (int, error) {
		calls++
		return 0, transient
	})
	require.ErrorIs(t, err, transient)
	require.Equal(t, 1, calls)
}
