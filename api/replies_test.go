package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestRepliesAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	conv := repliestest.NewConversation(ctx, t, b.store, 250)

	for _, order := range []string{"oldest", "newest"} {
		t.Run("Pages/"+order, func(t *testing.T) {
			t.Parallel()
			got := repliestest.Walk(t, 60, func(cursor string) *replies.Response {
				q := url.Values{"limit": {"60"}, "order": {order}, "cursor": {cursor}}
				var raw json.RawMessage
				status := b.do(t, http.MethodGet, "/api/v1/threads/"+conv.Thread.ID.String()+"/replies?"+q.Encode(), "", &raw)
				require.Equal(t, http.StatusOK, status)
				repliestest.CheckShape(t, raw)
				var resp replies.Response
				require.NoError(t, json.Unmarshal(raw, &resp))
				return &resp
			})
			conv.Check(t, got, order == "newest")
		})
	}

	t.Run("ByDiscordThreadID", func(t *testing.T) {
		t.Parallel()
		var raw json.RawMessage
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads/"+conv.DiscordThreadID+"/replies?limit=1", "", &raw))
		repliestest.CheckShape(t, raw)
		var resp replies.Response
		require.NoError(t, json.Unmarshal(raw, &resp))
		require.Equal(t, conv.Replies[0], *resp.Replies[0].Text)
	})

	tests := []struct {
		name   string
		path   string
		status int
		code   httpapi.Code
	}{
		{"UnknownThread", "/api/v1/threads/" + thread.NewID().String() + "/replies", http.StatusNotFound, httpapi.CodeNotFound},
		{"NotAnID", "/api/v1/threads/general/replies", http.StatusBadRequest, httpapi.CodeInvalidArgument},
		{"BadOrder", "/api/v1/threads/" + conv.Thread.ID.String() + "/replies?order=up", http.StatusBadRequest, httpapi.CodeInvalidArgument},
		{"BadLimit", "/api/v1/threads/" + conv.Thread.ID.String() + "/replies?limit=many", http.StatusBadRequest, httpapi.CodeInvalidArgument},
		{"LimitAboveMaximum", "/api/v1/threads/" + conv.Thread.ID.String() + "/replies?limit=201", http.StatusBadRequest, httpapi.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body httpapi.ErrorBody
			require.Equal(t, tt.status, b.do(t, http.MethodGet, tt.path, "", &body))
			require.Equal(t, tt.code, body.Code)
		})
	}
}

// failing answers every get-thread-replies with err.
type failing struct{ err error }

func (f failing) Get(context.Context, replies.Request) (*replies.Response, error) { return nil, f.err }

func (f failing) GetSlack(context.Context, replies.SlackRequest) (*replies.SlackResponse, error) {
	return nil, f.err
}

func TestRepliesAPIErrorCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   httpapi.Code
		status int
	}{
		{httpapi.CodeNotFound, http.StatusNotFound},
		{httpapi.CodeInvalidArgument, http.StatusBadRequest},
		{httpapi.CodeAuthentication, http.StatusBadGateway},
		{httpapi.CodeAuthorization, http.StatusForbidden},
		{httpapi.CodeRateLimit, http.StatusTooManyRequests},
		{httpapi.CodeUnavailable, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			t.Parallel()
			e := &httpapi.Error{Code: tt.code, Message: "safe text", RetryAfter: 1500 * time.Millisecond, Err: io.ErrUnexpectedEOF}
			h := apitest.Handler(t, api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{}, Token: token, Replies: failing{e}}))
			for _, path := range []string{"/api/v1/threads/" + thread.NewID().String() + "/replies",
				"/api/v1/slack/channels/C0123/threads/1700000000.000100/replies"} {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				require.Equal(t, tt.status, rec.Code)
				require.Contains(t, rec.Body.String(), `"code":"`+string(tt.code)+`"`)
				require.Contains(t, rec.Body.String(), `"error":"safe text"`)
				require.NotContains(t, rec.Body.String(), "unexpected EOF", "the cause stays in the logs")
				if tt.code == httpapi.CodeRateLimit {
					require.Equal(t, "2", rec.Header().Get("Retry-After"))
				}
			}
		})
	}
}

// slackThread is one Slack thread in memory, read as replies.Slack.
type slackThread []replies.SlackMessage

func (s slackThread) Replies(_ context.Context, q replies.SlackQuery) (replies.SlackPage, error) {
	if q.ThreadTS != s[0].TS {
		return replies.SlackPage{}, &httpapi.Error{Code: httpapi.CodeNotFound, Message: "no such Slack thread"}
	}
	return replies.SlackPage{Messages: s}, nil
}

func TestSlackRepliesAPI(t *testing.T) {
	t.Parallel()
	text := func(s string) *string { return &s }
	th := slackThread{{TS: "1700000000.000100", User: "U1", Text: text("deploy is stuck")},
		{TS: "1700000001.000100", User: "U2", Text: text("which one?"), Edited: true}}
	svc, err := replies.New(replies.Config{Slack: th, Logger: logtest.New(t)})
	require.NoError(t, err)
	h := apitest.Handler(t, api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{}, Token: token, Replies: svc}))
	tests := []struct {
		name, path string
		status     int
		body       string
	}{
		{"Shape", "/api/v1/slack/channels/C0123/threads/1700000000.000100/replies?limit=10", http.StatusOK, `{
			"parent": {"ts": "1700000000.000100", "user": "U1", "text": "deploy is stuck", "edited": false, "deleted": false, "subtype": null},
			"replies": [{"ts": "1700000001.000100", "user": "U2", "text": "which one?", "edited": true, "deleted": false, "subtype": null}],
			"nextCursor": null, "hasMore": false}`},
		{"UnknownThread", "/api/v1/slack/channels/C0123/threads/1700000009.000100/replies", http.StatusNotFound, ""},
		{"BadTS", "/api/v1/slack/channels/C0123/threads/now/replies", http.StatusBadRequest, ""},
		{"BadChannel", "/api/v1/slack/channels/general/threads/1700000000.000100/replies", http.StatusBadRequest, ""},
		{"BadOrder", "/api/v1/slack/channels/C0123/threads/1700000000.000100/replies?order=up", http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			if tt.body != "" {
				require.JSONEq(t, tt.body, rec.Body.String())
			}
		})
	}
}

func TestMetricsExposed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := thread.NewID().String()
	for range 3 {
		b.do(t, http.MethodGet, "/api/v1/threads/"+th+"/replies", "", nil)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	for _, want := range []string{
		"weft_thread_replies_requests_total 3",
		`weft_thread_replies_failures_total{code="NotFound"} 3`,
		`weft_thread_replies_duration_seconds_count{outcome="failure"} 3`,
		"# TYPE weft_thread_replies_rate_limited_total counter",
		"# TYPE weft_thread_replies_successes_total counter",
	} {
		require.Contains(t, body, want)
	}
	require.True(t, strings.Contains(rec.Header().Get("Content-Type"), "text/plain"), strconv.Quote(rec.Header().Get("Content-Type")))
}
