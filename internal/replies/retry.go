package replies

import (
	"context"
	"log/slog"
	"time"
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
	delay := s.retryBase
	for attempt := 1; ; attempt++ {
		resp, err := fetch(ctx)
		if err == nil {
			return resp, nil
		}
		e, transient := classify(err)
		if !transient || attempt == maxAttempts {
			return nil, e
		}
		s.logger.WarnContext(ctx, "get-thread-replies failed; retrying", slog.String("thread_id", threadID),
			slog.Int("attempt", attempt), slog.Duration("backoff", delay), slog.Any("error", err))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			e, _ := classify(ctx.Err())
			return nil, e
		case <-t.C:
		}
		delay *= 2
	}
}
