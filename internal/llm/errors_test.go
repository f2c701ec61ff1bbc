package llm

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNotConfigured(t *testing.T) {
	t.Parallel()
	p, err := New(Config{})
	require.NoError(t, err)
	require.Equal(t, "none", p.Name())

	resp, err := p.Complete(t.Context(), hello())
	require.Nil(t, resp)
	require.ErrorIs(t, err, ErrNotConfigured)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, KindNotConfigured, e.Kind)
	require.False(t, IsRetryable(err))
}

func TestNewUnknownProvider(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Provider: "gemini"})
	require.ErrorContains(t, err, `unknown provider "gemini"`)
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{"date in the past", http.Header{"Retry-After": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}, "Retry-After-Ms": {"-4"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, retryAfter(tt.header))
		})
	}
}

func TestBackoffStaysInBounds(t *testing.T) {
	t.Parallel()
	r := newRetrier(Config{MinBackoff: 100 * time.Millisecond})
	require.Equal(t, defaultMaxRetries, r.maxRetries)
	for n, want := range []time.Duration{100, 200, 400, 800} {
		d := r.backoff.Jittered(n + 1)
		want *= time.Millisecond
		require.GreaterOrEqual(t, d, want/2, "retry %d", n)
		require.LessOrEqual(t, d, want, "retry %d", n)
	}
	require.LessOrEqual(t, r.backoff.Jittered(200), maxBackoff)
	require.Zero(t, newRetrier(Config{MaxRetries: -1}).maxRetries)
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	err := &Error{Kind: KindRateLimited, StatusCode: 429, RetryAfter: 2 * time.Second, Provider: "openai", Err: errors.New("slow down")}
	require.Equal(t, "rate limited (status 429) retry after 2s: slow down", err.Error())
	require.True(t, IsRetryable(err))
	require.False(t, IsRetryable(errors.New("plain")))
}
