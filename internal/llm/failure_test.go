package llm

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// TestCompleteRetriesThenSucceeds covers each transient failure once before a
// good reply: the call must succeed, on the second attempt.
func TestCompleteRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault llmtest.Reply
		cfg   func(*Config)
		// wantWait, when set, is the exact delay the retry must have used.
		wantWait time.Duration
	}{
		{name: "429 honours retry-after", fault: llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: 7 * time.Millisecond}, wantWait: 7 * time.Millisecond},
		{name: "500", fault: llmtest.Reply{Status: http.StatusInternalServerError}},
		{name: "529 overloaded", fault: llmtest.Reply{Status: 529}},
		{name: "cut body", fault: llmtest.Reply{Text: "lost", Cut: true}},
		{name: "malformed json", fault: llmtest.Reply{Malformed: true}},
		{name: "no choices or content", fault: llmtest.Reply{RawBody: `{}`}},
		{
			name:  "attempt timeout",
			fault: llmtest.Reply{Delay: time.Minute},
			cfg:   func(c *Config) { c.Timeout = 500 * time.Millisecond },
		},
	}
	for _, tt := range tests {
		for _, provider := range providers() {
			t.Run(tt.name+"/"+provider, func(t *testing.T) {
				t.Parallel()
				var mods []func(*Config)
				if tt.cfg != nil {
					mods = append(mods, tt.cfg)
				}
				f := setup(t, provider, mods...)
				f.srv.Enqueue(tt.fault, llmtest.Reply{Text: "second time lucky"})

				resp, err := f.p.Complete(t.Context(), hello())
				require.NoError(t, err)
				require.Equal(t, "second time lucky", resp.Content)
				require.Equal(t, 2, f.srv.Calls())
				waits := f.waits.all()
				require.Len(t, waits, 1)
				if tt.wantWait > 0 {
					require.Equal(t, tt.wantWait, waits[0])
				} else {
					// No hint: exponential backoff from MinBackoff (1ms), jittered.
					require.LessOrEqual(t, waits[0], time.Millisecond)
				}
			})
		}
	}
}

// TestCompleteFails covers calls that end in an error: after retries are
// spent, or at once for what retrying cannot fix. MaxRetries is 2, so a
// retried fault is seen three times and the good reply queued after it is
// never reached.
func TestCompleteFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		fault         llmtest.Reply
		wantKind      ErrorKind
		wantStatus    int
		wantCalls     int
		wantRetryable bool
		wantHint      time.Duration
	}{
		{name: "500 until retries run out", fault: llmtest.Reply{Status: 500}, wantKind: KindServer, wantStatus: 500, wantCalls: 3, wantRetryable: true},
		{name: "429 until retries run out", fault: llmtest.Reply{Status: 429, RetryAfter: time.Millisecond}, wantKind: KindRateLimited, wantStatus: 429, wantCalls: 3, wantRetryable: true, wantHint: time.Millisecond},
		{name: "429 with a hint too long to wait", fault: llmtest.Reply{Status: 429, RetryAfter: 2 * time.Minute}, wantKind: KindRateLimited, wantStatus: 429, wantCalls: 1, wantRetryable: true, wantHint: 2 * time.Minute},
		{name: "cut body every time", fault: llmtest.Reply{Text: "lost", Cut: true}, wantKind: KindMalformed, wantStatus: 200, wantCalls: 3, wantRetryable: true},
		{name: "malformed json every time", fault: llmtest.Reply{Malformed: true}, wantKind: KindMalformed, wantStatus: 200, wantCalls: 3, wantRetryable: true},
		{name: "401 not retried", fault: llmtest.Reply{Status: 401}, wantKind: KindAuth, wantStatus: 401, wantCalls: 1},
		{name: "403 not retried", fault: llmtest.Reply{Status: 403}, wantKind: KindAuth, wantStatus: 403, wantCalls: 1},
		{name: "400 not retried", fault: llmtest.Reply{Status: 400}, wantKind: KindBadRequest, wantStatus: 400, wantCalls: 1},
		{name: "529 overloaded until retries run out", fault: llmtest.Reply{Status: 529}, wantKind: KindServer, wantStatus: 529, wantCalls: 3, wantRetryable: true},
		{name: "openai context too long not retried", fault: llmtest.Reply{Status: 400, ErrorMessage: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."},
			wantKind: KindContextTooLong, wantStatus: 400, wantCalls: 1},
		{name: "anthropic prompt too long not retried", fault: llmtest.Reply{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"},
			wantKind: KindContextTooLong, wantStatus: 400, wantCalls: 1},
		{name: "413 not retried", fault: llmtest.Reply{Status: 413}, wantKind: KindContextTooLong, wantStatus: 413, wantCalls: 1},
	}
	for _, tt := range tests {
		for _, provider := range providers() {
			t.Run(tt.name+"/"+provider, func(t *testing.T) {
				t.Parallel()
				f := setup(t, provider)
				f.srv.Enqueue(tt.fault, tt.fault, tt.fault, llmtest.Reply{Text: "too late"})

				resp, err := f.p.Complete(t.Context(), hello())
				require.Nil(t, resp, "a failed call never yields a Response")
				e := requireError(t, err, provider, tt.wantKind)
				require.Equal(t, tt.wantStatus, e.StatusCode)
				require.Equal(t, tt.wantHint, e.RetryAfter)
				require.Equal(t, tt.wantRetryable, IsRetryable(err))
				require.Equal(t, tt.wantCalls, f.srv.Calls())
			})
		}
	}
}

func TestCompleteNetworkError(t *testing.T) {
	t.Parallel()
	for _, provider := range providers() {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider, func(c *Config) { c.MaxRetries = -1 })
			f.srv.Close() // nothing listens any more

			_, err := f.p.Complete(t.Context(), hello())
			requireError(t, err, provider, KindNetwork)
			require.True(t, IsRetryable(err))
		})
	}
}

// TestCompleteCanceled checks that a caller's cancellation ends the call at
// once, whether it strikes during a request or between attempts, and is not
// retried.
func TestCompleteCanceled(t *testing.T) {
	t.Parallel()
	errStop := errors.New("stopping")
	tests := []struct {
		name  string
		fault llmtest.Reply
	}{
		{name: "during a slow reply", fault: llmtest.Reply{Delay: time.Minute}},
		{name: "while waiting out retry-after", fault: llmtest.Reply{Status: 429, RetryAfter: 50 * time.Second}},
	}
	for _, tt := range tests {
		for _, provider := range providers() {
			t.Run(tt.name+"/"+provider, func(t *testing.T) {
				t.Parallel()
				f := setup(t, provider)
				f.srv.Enqueue(tt.fault, llmtest.Reply{Text: "too late"})
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				go func() {
					<-f.srv.Arrived()
					cancel(errStop)
				}()

				resp, err := f.p.Complete(ctx, hello())
				require.Nil(t, resp)
				requireError(t, err, provider, KindCanceled)
				require.ErrorIs(t, err, context.Canceled)
				require.ErrorIs(t, err, errStop)
				require.False(t, IsRetryable(err))
				require.Equal(t, 1, f.srv.Calls())
			})
		}
	}
}
