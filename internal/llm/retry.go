package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Retry policy limits.
const (
	// maxBackoff caps the exponential backoff between attempts.
	maxBackoff = 30 * time.Second
	// maxRetryAfter is the longest server hint we wait out inside one call.
	// A longer one (a spent daily quota, say) ends the call at once with the
	// hint in Error.RetryAfter, so the job layer can reschedule instead of
	// holding a worker and the thread's lease.
	maxRetryAfter = time.Minute
)

// retrier is the one retry loop of this package.
//
// Both SDKs can retry on their own, but they are configured with
// option.WithMaxRetries(0) and this loop is used instead, because the SDK
// loops differ and fall short of what weft needs:
//   - neither retries a 200 whose body does not parse, and openai-go does not
//     retry a body cut mid-read either (anthropic-sdk-go does); here every
//     malformed reply is retried the same way;
//   - their backoff starts at a fixed 500ms, which tests cannot shorten;
//   - one loop means one policy for both providers, and one place that knows
//     when a Retry-After hint is too long to wait out.
//
// Stacking it on the SDKs' loops would multiply the attempts, so it is either
// this loop or theirs, never both.
type retrier struct {
	maxRetries int
	minBackoff time.Duration
	// wait sleeps for d or until ctx ends; tests replace it to record the
	// delays the policy chose without sleeping.
	wait func(ctx context.Context, d time.Duration) error
}

func newRetrier(cfg Config) *retrier {
	r := &retrier{maxRetries: cfg.MaxRetries, minBackoff: cfg.MinBackoff, wait: sleep}
	switch {
	case r.maxRetries == 0:
		r.maxRetries = defaultMaxRetries
	case r.maxRetries < 0:
		r.maxRetries = 0
	}
	if r.minBackoff <= 0 {
		r.minBackoff = defaultMinBackoff
	}
	return r
}

// do runs attempt until it succeeds, fails for good, or the retries are
// spent. attempt must return an *Error on failure; any other error ends the
// loop as it is.
func (r *retrier) do(ctx context.Context, provider string, attempt func(context.Context) (*Response, error)) (*Response, error) {
	for n := 0; ; n++ {
		resp, err := attempt(ctx)
		if err == nil {
			return resp, nil
		}
		var e *Error
		if !errors.As(err, &e) || !e.Kind.retryable() || n >= r.maxRetries || e.RetryAfter > maxRetryAfter {
			return nil, err
		}
		if r.wait(ctx, r.delay(n, e.RetryAfter)) != nil {
			return nil, canceled(ctx, provider)
		}
	}
}

// delay is how long to wait before retry number n+1: the server's hint when
// it gave one, else exponential backoff with jitter, so replicas that failed
// together do not retry together.
func (r *retrier) delay(n int, hint time.Duration) time.Duration {
	if hint > 0 {
		return hint
	}
	d := maxBackoff
	if n < 30 { // beyond that the shift overflows; the cap applies anyway
		d = min(r.minBackoff<<n, maxBackoff)
	}
	// Equal jitter: half fixed, half random.
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
