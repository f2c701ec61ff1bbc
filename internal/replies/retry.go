package replies

import (
	"context"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/internal/retry"
)

// Retry policy of the origin design: three attempts in all, waiting one
// second, then two, between them.
const (
	maxAttempts      = 3
	defaultRetryBase = time.Second
)

// retry runs fetch until it succeeds, fails in a way another try cannot
// fix (authentication, authorization, a rate limit, a missing thread, a bad
// request), or has been tried maxAttempts times. A rate limit is returned
// at once: waiting it out here would hold the caller (an agent's turn, an
// HTTP request) for as long as the platform says, and the caller is better
// placed to decide.
func (s *Service) retry(ctx context.Context, threadID string, fetch func(context.Context) (*Response, error)) (*Response, error) {
	resp, err := retry.Do(ctx, retry.Policy{
		Attempts: maxAttempts,
		Backoff:  retry.Backoff{Base: s.retryBase},
		Retryable: func(err error) bool {
			_, transient := classify(err)
			return transient
		},
		OnRetry: func(attempt int, wait time.Duration, err error) {
			s.logger.WarnContext(ctx, "get-thread-replies failed; retrying", slog.String("thread_id", threadID),
				slog.Int("attempt", attempt), slog.Duration("backoff", wait), slog.Any("error", err))
		},
	}, fetch)
	if err != nil {
		e, _ := classify(err)
		return nil, e
	}
	return resp, nil
}
