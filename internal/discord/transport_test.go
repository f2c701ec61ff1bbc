package discord

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/surface"
)

func TestRouteKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ method, path, want string }{
		{"POST", "/api/v9/channels/123456789012345678/messages", "POST /api/v9/channels/123456789012345678/messages"},
		{"PATCH", "/api/v9/channels/123456789012345678/messages/223456789012345678", "PATCH /api/v9/channels/123456789012345678/messages/:id"},
		{"PUT", "/api/v9/applications/323456789012345678/guilds/423456789012345678/commands", "PUT /api/v9/applications/:id/guilds/423456789012345678/commands"},
		{"PATCH", "/api/v9/webhooks/323456789012345678/tok123/messages/@original", "PATCH /api/v9/webhooks/323456789012345678/tok123/messages/@original"},
		{"GET", "/api/v9/channels/1/messages/42", "GET /api/v9/channels/1/messages/42"}, // not snowflakes: kept
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, routeKey(tt.method, tt.path))
	}
}

// stubTransport answers from a function and counts requests.
type stubTransport struct {
	calls  atomic.Int32
	answer func(*http.Request) *http.Response
}

func (s *stubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.calls.Add(1)
	return s.answer(req), nil
}

func stubResponse(status int, header http.Header, body string) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(body))}
}

func TestLimitTransport(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	request := func(ctx context.Context, path string) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://discord.com/api/v9"+path, nil)
		require.NoError(t, err)
		return req
	}

	t.Run("GlobalLimitWithoutResetHeadersBlocksOtherRoutes", func(t *testing.T) {
		t.Parallel()
		stub := &stubTransport{answer: func(*http.Request) *http.Response {
			return stubResponse(http.StatusTooManyRequests, http.Header{"X-Ratelimit-Global": {"true"}, "Retry-After": {"3600"}},
				`{"message":"You are being rate limited.","retry_after":3600,"global":true}`)
		}}
		tr := newLimitTransport(stub, logger)
		_, err := tr.RoundTrip(request(t.Context(), "/channels/1/messages"))
		var limited *rateLimitedError
		require.ErrorAs(t, err, &limited)
		require.True(t, limited.global)
		require.Equal(t, time.Hour, limited.retryAfter)

		_, err = tr.RoundTrip(request(t.Context(), "/channels/2/messages"))
		require.ErrorAs(t, err, &limited, "another route is blocked too")
		require.Equal(t, int32(1), stub.calls.Load(), "without reaching Discord")
	})

	t.Run("ExhaustedBucketWaitsAndHeadersAreHiddenFromDiscordgo", func(t *testing.T) {
		t.Parallel()
		stub := &stubTransport{answer: func(*http.Request) *http.Response {
			return stubResponse(http.StatusOK, http.Header{
				"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset-After": {"3600"}, "X-Ratelimit-Bucket": {"b"},
			}, `[]`)
		}}
		tr := newLimitTransport(stub, logger)
		resp, err := tr.RoundTrip(request(t.Context(), "/channels/1/messages"))
		require.NoError(t, err)
		resp.Body.Close()
		for _, h := range rateLimitHeaders {
			require.Empty(t, resp.Header.Get(h), "discordgo must not see %s, or it sleeps without a context", h)
		}

		_, err = tr.RoundTrip(request(t.Context(), "/channels/1/messages"))
		var limited *rateLimitedError
		require.ErrorAs(t, err, &limited)
		require.False(t, limited.global)
		_, err = tr.RoundTrip(request(t.Context(), "/channels/2/messages"))
		require.NoError(t, err, "other channels are other buckets")
		require.Equal(t, int32(2), stub.calls.Load())
	})

	t.Run("RetriesAreBounded", func(t *testing.T) {
		t.Parallel()
		stub := &stubTransport{answer: func(*http.Request) *http.Response {
			return stubResponse(http.StatusTooManyRequests, nil, `{"retry_after":0.001,"global":false}`)
		}}
		tr := newLimitTransport(stub, logger)
		_, err := tr.RoundTrip(request(t.Context(), "/channels/1/messages"))
		var limited *rateLimitedError
		require.ErrorAs(t, err, &limited)
		require.Equal(t, int32(maxRateLimitRetries+1), stub.calls.Load())
	})

	t.Run("WaitHonoursCancellation", func(t *testing.T) {
		t.Parallel()
		tr := newLimitTransport(&stubTransport{}, logger)
		tr.routeUntil[routeKey(http.MethodGet, "/api/v9/channels/1/messages")] = time.Now().Add(10 * time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := tr.RoundTrip(request(ctx, "/channels/1/messages"))
			done <- err
		}()
		cancel()
		require.ErrorIs(t, receive(t, done), context.Canceled)
	})
}

func TestTranslate(t *testing.T) {
	t.Parallel()
	restErr := func(status int, body string) error {
		return &discordgo.RESTError{
			Response:     &http.Response{StatusCode: status, Status: http.StatusText(status)},
			ResponseBody: []byte(body),
			Message:      &discordgo.APIErrorMessage{Code: 50013, Message: "Missing Permissions"},
		}
	}
	tests := []struct {
		name  string
		err   error
		kind  surface.Kind
		retry time.Duration
	}{
		{"Unauthorized", restErr(401, ""), surface.KindAuth, 0},
		{"Forbidden", restErr(403, ""), surface.KindForbidden, 0},
		{"NotFound", restErr(404, ""), surface.KindNotFound, 0},
		{"BadRequest", restErr(400, ""), surface.KindInvalid, 0},
		{"RESTServer", restErr(500, ""), surface.KindServer, 0},
		{"DiscordgoRateLimit", &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{
			TooManyRequests: &discordgo.TooManyRequests{RetryAfter: 2 * time.Second}, URL: "u"}}, surface.KindRateLimited, 2 * time.Second},
		{"TransportRateLimit", &rateLimitedError{retryAfter: time.Second, global: true}, surface.KindRateLimited, time.Second},
		{"TransportServer", &serverError{status: 502}, surface.KindServer, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := translate("op", tt.err)
			de := requireKind(t, err, tt.kind)
			require.Equal(t, "op", de.Op)
			require.Equal(t, tt.retry, de.RetryAfter)
			require.ErrorIs(t, err, tt.err, "the cause stays reachable")
		})
	}

	t.Run("ContextAndNetworkErrorsStayUntyped", func(t *testing.T) {
		t.Parallel()
		for _, cause := range []error{context.Canceled, context.DeadlineExceeded, errors.New("connection refused")} {
			err := translate("op", cause)
			var de *surface.Error
			require.False(t, errors.As(err, &de))
			require.ErrorIs(t, err, cause)
		}
		require.NoError(t, translate("op", nil))
	})
}
