package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/mcpserver"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/fromslack"
)

// slackThreads is conversations.replies as Slack answers it: the parent
// first on every page, replies oldest first, next_cursor while more
// remain, latest exclusive, and a queue of failures to answer with first.
type slackThreads struct {
	mu       sync.Mutex
	threads  map[string][]map[string]any // "channel/ts" → parent, replies
	failures []func(http.ResponseWriter)
	calls    int
}

func (f *slackThreads) fail(fn ...func(http.ResponseWriter)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures, f.calls = fn, 0
}

func (f *slackThreads) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func slackError(status int, code string, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
	}
}

func (f *slackThreads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if len(f.failures) > 0 {
		fn := f.failures[0]
		f.failures = f.failures[1:]
		fn(w)
		return
	}
	if r.ParseForm() != nil || r.PostForm.Get("token") != "xoxb-test" {
		slackError(http.StatusOK, "invalid_auth")(w)
		return
	}
	msgs, ok := f.threads[r.PostForm.Get("channel")+"/"+r.PostForm.Get("ts")]
	if !ok {
		slackError(http.StatusOK, "thread_not_found")(w)
		return
	}
	limit, _ := strconv.Atoi(r.PostForm.Get("limit"))
	from, _ := strconv.Atoi(r.PostForm.Get("cursor"))
	from = max(from, 1)
	var replies []map[string]any
	for _, m := range msgs[1:] {
		if latest := r.PostForm.Get("latest"); latest == "" || m["ts"].(string) < latest {
			replies = append(replies, m)
		}
	}
	page := []map[string]any{msgs[0]}
	end := min(len(replies), from-1+limit-1)
	page = append(page, replies[from-1:end]...)
	body := map[string]any{"ok": true, "messages": page, "has_more": end < len(replies)}
	if end < len(replies) {
		body["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end + 1)}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// newSlackServer is the MCP server with Slack read through slack-go
// pointed at f.
func newSlackServer(t *testing.T, f *slackThreads) *mcpserver.Deps {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("POST /api/conversations.replies", f)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	store := dbtest.NewStore(t)
	client := slack.New("xoxb-test", slack.OptionAPIURL(srv.URL+"/api/"))
	svc, err := replies.New(replies.Config{Store: store, Slack: fromslack.New(client), Registry: prometheus.NewRegistry(),
		Logger: logtest.New(t), RetryBase: time.Millisecond})
	require.NoError(t, err)
	return &mcpserver.Deps{Store: store, Replies: svc, Logger: logtest.New(t)}
}

// TestSlackReplies is get-thread-replies over MCP for a Slack thread named
// as get-thread-replies.md names it: its shape, its pages and its errors.
func TestSlackReplies(t *testing.T) {
	t.Parallel()
	const channel, parentTS = "C0123ABCD", "1700000000.000100"
	thread := []map[string]any{{"ts": parentTS, "user": "U1", "text": "deploy is stuck", "thread_ts": parentTS}}
	for i := 1; i <= 5; i++ {
		m := map[string]any{"ts": fmt.Sprintf("17000000%02d.000100", i), "user": "U2", "text": fmt.Sprintf("reply %d", i), "thread_ts": parentTS}
		if i == 2 {
			m["edited"] = map[string]any{"user": "U2", "ts": "1700000099.000000"}
		}
		if i == 4 {
			m["user"], m["bot_id"], m["subtype"] = "", "B1", "bot_message"
		}
		thread = append(thread, m)
	}
	f := &slackThreads{threads: map[string][]map[string]any{
		channel + "/" + parentTS: thread,
		channel + "/1600000000.000100": {
			{"ts": "1600000000.000100", "subtype": "tombstone", "text": "This message was deleted.", "thread_ts": "1600000000.000100"},
			{"ts": "1600000001.000100", "user": "U2", "text": "still here"},
		},
	}}
	cs := connectInMemory(t, mcpserver.New(*newSlackServer(t, f)))
	args := func(kv ...any) map[string]any {
		m := map[string]any{"channelId": channel, "threadTs": parentTS}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	t.Run("Shape", func(t *testing.T) {
		res := call(t, cs, "get-thread-replies", args(), nil)
		require.False(t, res.IsError)
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.JSONEq(t, `{
			"parent": {"ts": "1700000000.000100", "user": "U1", "text": "deploy is stuck", "edited": false, "deleted": false, "subtype": null},
			"replies": [
				{"ts": "1700000001.000100", "user": "U2", "text": "reply 1", "edited": false, "deleted": false, "subtype": null},
				{"ts": "1700000002.000100", "user": "U2", "text": "reply 2", "edited": true, "deleted": false, "subtype": null},
				{"ts": "1700000003.000100", "user": "U2", "text": "reply 3", "edited": false, "deleted": false, "subtype": null},
				{"ts": "1700000004.000100", "user": "B1", "text": "reply 4", "edited": false, "deleted": false, "subtype": "bot_message"},
				{"ts": "1700000005.000100", "user": "U2", "text": "reply 5", "edited": false, "deleted": false, "subtype": null}
			],
			"nextCursor": null,
			"hasMore": false
		}`, string(raw))
	})

	t.Run("DeletedParent", func(t *testing.T) {
		var got replies.SlackResponse
		call(t, cs, "get-thread-replies", map[string]any{"channelId": channel, "threadTs": "1600000000.000100"}, &got)
		require.True(t, got.Parent.Deleted)
		require.Nil(t, got.Parent.Text)
		require.Len(t, got.Replies, 1)
	})

	pages := func(t *testing.T, order string) []string {
		var seen []string
		cursor := ""
		for range 10 {
			a := args("limit", 2, "order", order)
			if cursor != "" {
				a["cursor"] = cursor
			}
			var got replies.SlackResponse
			res := call(t, cs, "get-thread-replies", a, &got)
			require.False(t, res.IsError, "%v", res.Content)
			require.Equal(t, parentTS, got.Parent.TS, "every page carries the parent")
			for _, m := range got.Replies {
				seen = append(seen, *m.Text)
			}
			if !got.HasMore {
				require.Nil(t, got.NextCursor)
				return seen
			}
			require.NotNil(t, got.NextCursor)
			cursor = *got.NextCursor
		}
		t.Fatal("pages never ended")
		return nil
	}
	t.Run("PagesOldest", func(t *testing.T) {
		require.Equal(t, []string{"reply 1", "reply 2", "reply 3", "reply 4", "reply 5"}, pages(t, "oldest"))
	})
	t.Run("PagesNewest", func(t *testing.T) {
		require.Equal(t, []string{"reply 5", "reply 4", "reply 3", "reply 2", "reply 1"}, pages(t, "newest"))
	})

	errs := []struct {
		name  string
		fail  []func(http.ResponseWriter)
		args  map[string]any
		code  httpapi.Code
		calls int
	}{
		{"UnknownThread", nil, args("threadTs", "1700000000.999999"), httpapi.CodeNotFound, 1},
		{"ChannelNotFound", []func(http.ResponseWriter){slackError(200, "channel_not_found")}, args(), httpapi.CodeNotFound, 1},
		{"InvalidAuthNotRetried", []func(http.ResponseWriter){slackError(200, "invalid_auth")}, args(), httpapi.CodeAuthentication, 1},
		{"TokenRevokedNotRetried", []func(http.ResponseWriter){slackError(200, "token_revoked")}, args(), httpapi.CodeAuthentication, 1},
		{"NotInChannel", []func(http.ResponseWriter){slackError(200, "not_in_channel")}, args(), httpapi.CodeAuthorization, 1},
		{"MissingScope", []func(http.ResponseWriter){slackError(200, "missing_scope")}, args(), httpapi.CodeAuthorization, 1},
		{"RateLimitAtOnce", []func(http.ResponseWriter){slackError(429, "ratelimited", "Retry-After", "30")}, args(), httpapi.CodeRateLimit, 1},
		{"RateLimitWithoutRetryAfter", []func(http.ResponseWriter){slackError(429, "ratelimited")}, args(), httpapi.CodeRateLimit, 1},
		{"ServerErrorsRetried", []func(http.ResponseWriter){slackError(500, "internal_error"), slackError(200, "fatal_error"), slackError(503, "service_unavailable")},
			args(), httpapi.CodeUnavailable, 3},
		{"BadChannelID", nil, args("channelId", "general"), httpapi.CodeInvalidArgument, 0},
		{"BadTS", nil, args("threadTs", "yesterday"), httpapi.CodeInvalidArgument, 0},
		{"BothForms", nil, args("thread_id", "0192f1d2-0000-7000-8000-000000000001"), httpapi.CodeInvalidArgument, 0},
		{"TSWithoutChannel", nil, map[string]any{"threadTs": parentTS}, httpapi.CodeInvalidArgument, 0},
		{"NeitherForm", nil, map[string]any{}, httpapi.CodeInvalidArgument, 0},
		{"CursorOfAnotherThread", nil, args("cursor", "eyJrIjoicmVwbGllcyIsInAiOiIzIn0"), httpapi.CodeInvalidArgument, 0},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			f.fail(tt.fail...)
			require.Equal(t, tt.code, toolError(t, call(t, cs, "get-thread-replies", tt.args, nil)))
			require.Equal(t, tt.calls, f.Calls())
		})
	}

	t.Run("TransientFailureRecovers", func(t *testing.T) {
		f.fail(slackError(502, "bad_gateway"), slackError(200, "internal_error"))
		var got replies.SlackResponse
		res := call(t, cs, "get-thread-replies", args(), &got)
		require.False(t, res.IsError)
		require.Len(t, got.Replies, 5)
		require.Equal(t, 3, f.Calls())
	})
}
