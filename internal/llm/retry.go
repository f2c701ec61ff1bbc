package llm

import (
	"context"
	"errors"
	"time"

	"github.com/weft-dev/weft/internal/retry"
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

// retrier is how this package retries a call.
//
// Both SDKs can retry on their own, but they are configured with
// option.WithMaxRetries(0) and weft's retry loop is used instead, because
// the SDK loops differ and fall short of what weft needs:
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
	// backoff is equal jitter: of each doubled wait (from MinBackoff, up to
	// maxBackoff), half is fixed and half random.
	backoff retry.Backoff
	// wait sleeps for d or until ctx ends; tests replace it to record the
	// delays the policy chose without sleeping.
	wait func(ctx context.Context, d time.Duration) error
}

func newRetrier(cfg Config) *retrier {
	r := &retrier{maxRetries: cfg.MaxRetries, wait: retry.Sleep}
	switch {
	case r.maxRetries == 0:
		r.maxRetries = defaultMaxRetries
	case r.maxRetries < 0:
		r.maxRetries = 0
	}
	minBackoff := cfg.MinBackoff
	if minBackoff <= 0 {
		minBackoff = defaultMinBackoff
	}
	r.backoff = retry.Backoff{Base: minBackoff / 2, Max: maxBackoff / 2, Jitter: 1}
	return r
}

// do runs attempt until it succeeds, fails for good, or the retries are
// spent. attempt must return an *Error on failure; any other error ends the
// loop as it is.
func (r *retrier) do(ctx context.Context, provider string, attempt func(context.Context) (*Response, error)) (*Response, error) {
	resp, err := retry.Do(ctx, retry.Policy{
		Attempts:  r.maxRetries + 1,
		Backoff:   r.backoff,
		MaxWait:   maxRetryAfter,
		Retryable: IsRetryable,
		Sleep:     r.wait,
	}, attempt)
	if errors.Is(err, retry.ErrInterrupted) {
		return nil, canceled(ctx, provider)
	}
	return resp, err
}
