package linear

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weft-dev/weft/internal/surface"
)

func gqlErr(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}

type timeoutError struct{}

func (timeoutError) Error() string { return "i/o timeout" }
func (timeoutError) Timeout() bool { return true }

func TestCheckResponseKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want surface.Kind
	}{
		{"RateLimited400", &graphql.HTTPError{StatusCode: 400, Response: graphql.Response{Errors: gqlerror.List{gqlErr("RATELIMITED", "Rate limit exceeded")}}}, surface.KindRateLimited},
		{"RateLimited200", gqlerror.List{gqlErr("RATELIMITED", "Rate limit exceeded")}, surface.KindRateLimited},
		{"HTTP429", &graphql.HTTPError{StatusCode: 429}, surface.KindRateLimited},
		{"AuthCode", &graphql.HTTPError{StatusCode: 400, Response: graphql.Response{Errors: gqlerror.List{gqlErr("AUTHENTICATION_ERROR", "not authenticated")}}}, surface.KindAuth},
		{"HTTP401", &graphql.HTTPError{StatusCode: 401}, surface.KindAuth},
		{"HTTP503", &graphql.HTTPError{StatusCode: 503}, surface.KindServer},
		{"HTTP404", &graphql.HTTPError{StatusCode: 404}, surface.KindNotFound},
		{"Validation", &graphql.HTTPError{StatusCode: 400, Response: graphql.Response{Errors: gqlerror.List{gqlErr("GRAPHQL_VALIDATION_FAILED", "Cannot query field")}}}, surface.KindInvalid},
		{"EntityNotFound", gqlerror.List{gqlErr("INPUT_ERROR", "Entity not found: Issue")}, surface.KindNotFound},
		{"Conflict", gqlerror.List{{Message: "conflict on insert of AgentActivity", Extensions: map[string]any{
			"code": "INPUT_ERROR", "userPresentableMessage": "Entity AgentActivity with id x already exists.",
		}}}, surface.KindConflict},
		{"StatusCodeExtension", gqlerror.List{{Message: "?", Extensions: map[string]any{"statusCode": float64(502)}}}, surface.KindServer},
		{"RateLimitWinsOverOthers", gqlerror.List{gqlErr("INPUT_ERROR", "bad"), gqlErr("RATELIMITED", "slow down")}, surface.KindRateLimited},
		{"Timeout", &url.Error{Op: "Post", URL: "u", Err: timeoutError{}}, surface.KindServer},
		{"Token", &url.Error{Op: "Post", URL: "u", Err: &tokenError{err: errors.New("no installation")}}, surface.KindAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkResponse(t.Context(), "op", tt.err, &exchange{}, time.Now())
			var e *surface.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tt.want, e.Kind)
			require.Equal(t, tt.err, e.Err)
		})
	}
}

func TestCheckResponseCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := checkResponse(ctx, "op", &url.Error{Op: "Post", URL: "u", Err: context.Canceled}, nil, time.Now())
	require.ErrorIs(t, err, context.Canceled)
	var e *surface.Error
	require.False(t, errors.As(err, &e))
}

func TestRateLimitWait(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_767_889_992_000)
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"RequestsExhausted", http.Header{
			"X-Ratelimit-Requests-Reset": {ms(2 * time.Second)}, "X-Ratelimit-Requests-Remaining": {"0"},
			"X-Ratelimit-Complexity-Reset": {ms(time.Hour)}, "X-Ratelimit-Complexity-Remaining": {"5000"},
		}, 2 * time.Second},
		{"ComplexityExhausted", http.Header{
			"X-Ratelimit-Requests-Reset": {ms(2 * time.Second)}, "X-Ratelimit-Requests-Remaining": {"10"},
			"X-Ratelimit-Complexity-Reset": {ms(30 * time.Second)}, "X-Ratelimit-Complexity-Remaining": {"0"},
		}, 30 * time.Second},
		{"NoRemainingHeadersTakesLater", http.Header{
			"X-Ratelimit-Requests-Reset": {ms(2 * time.Second)}, "X-Ratelimit-Complexity-Reset": {ms(9 * time.Second)},
		}, 9 * time.Second},
		{"ResetInThePast", http.Header{"X-Ratelimit-Requests-Reset": {ms(-time.Second)}}, 0},
		{"RetryAfterSeconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"NoHeaders", nil, defaultRateWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := rateLimitWait(tt.header, now)
			require.GreaterOrEqual(t, got, tt.want)
			require.LessOrEqual(t, got, tt.want+time.Duration(rateLimitJitterNs)+time.Millisecond)
		})
	}
}
