package llmtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	openAIHello    = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	anthropicHello = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
)

type result struct {
	status int
	header http.Header
	body   string
	err    error
}

// post sends body to the fake's path and returns what came back.
func post(ctx context.Context, url, body string) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

func TestScriptThenDefault(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.Enqueue(Reply{Text: "scripted"})
	s.SetDefault(func(r Request) Reply { return Reply{Text: "echo " + r.Last().Content} })

	first := post(t.Context(), s.OpenAIBaseURL()+"/chat/completions", openAIHello)
	second := post(t.Context(), s.URL()+"/v1/messages", anthropicHello)
	require.NoError(t, first.err)
	require.NoError(t, second.err)
	require.Equal(t, "scripted", jsonString(t, first.body, "choices", 0, "message", "content"))
	require.Equal(t, "echo hi", jsonString(t, second.body, "content", 0, "text"))
	require.Equal(t, 2, s.Calls())
	require.Equal(t, []string{"openai", "anthropic"}, []string{s.Requests()[0].Protocol, s.Requests()[1].Protocol})
}

func TestRetryAfterHeaders(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.Enqueue(Reply{Status: http.StatusTooManyRequests, RetryAfter: 1500 * time.Millisecond})

	res := post(t.Context(), s.URL()+"/v1/messages", anthropicHello)
	require.NoError(t, res.err)
	require.Equal(t, http.StatusTooManyRequests, res.status)
	require.Equal(t, "2", res.header.Get("Retry-After"))
	require.Equal(t, "1500", res.header.Get("Retry-After-Ms"))
	require.Equal(t, "rate_limit_error", jsonString(t, res.body, "error", "type"))
}

// TestRejectsLikeTheRealAPI checks the 400s an adapter bug would earn in
// production, and that a rejected request leaves the script alone.
func TestRejectsLikeTheRealAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, body, wantErr string
	}{
		{
			name:    "openai tool result without a call",
			path:    "/v1/chat/completions",
			body:    `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"x","content":"r"}]}`,
			wantErr: "must be a response to a preceding message with 'tool_calls'",
		},
		{
			name:    "openai tool call left unanswered",
			path:    "/v1/chat/completions",
			body:    `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"and?"}]}`,
			wantErr: "must be followed by tool messages",
		},
		{
			name: "anthropic tool results split over two messages",
			path: "/v1/messages",
			body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"2"}]}]}`,
			wantErr: "tool_use ids were found without tool_result blocks immediately after",
		},
		{
			name:    "anthropic empty text",
			path:    "/v1/messages",
			body:    `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":""}]}`,
			wantErr: "text content blocks must be non-empty",
		},
		{
			name:    "anthropic without max_tokens",
			path:    "/v1/messages",
			body:    `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			wantErr: "max_tokens",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(t)
			s.Enqueue(Reply{Text: "kept"})

			res := post(t.Context(), s.URL()+tt.path, tt.body)
			require.NoError(t, res.err)
			require.Equal(t, http.StatusBadRequest, res.status)
			require.Contains(t, res.body, tt.wantErr)
			require.Equal(t, 1, s.Calls(), "rejected requests are recorded too")

			s.SetDefault(func(Request) Reply { return Reply{Text: "default"} })
			next := post(t.Context(), s.URL()+"/v1/messages", anthropicHello)
			require.Equal(t, "kept", jsonString(t, next.body, "content", 0, "text"))
		})
	}
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	res := post(t.Context(), s.URL()+"/chat/completions", openAIHello)
	require.NoError(t, res.err)
	require.Equal(t, http.StatusNotFound, res.status)
	require.Contains(t, res.body, "want POST /v1/chat/completions")
}

func TestBlockHoldsRequestsUntilRelease(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	release := s.Block()
	done := make(chan result, 1)
	go func() { done <- post(t.Context(), s.URL()+"/v1/messages", anthropicHello) }()

	got := <-s.Arrived()
	require.Equal(t, "hi", got.Last().Content)
	select {
	case res := <-done:
		t.Fatalf("answered while blocked: %+v", res)
	default:
	}
	release()
	release() // idempotent
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, http.StatusOK, res.status)
}

func TestCloseFreesBlockedRequests(t *testing.T) {
	t.Parallel()
	s := NewServer(nil)
	s.Block()
	done := make(chan result, 1)
	go func() { done <- post(t.Context(), s.OpenAIBaseURL()+"/chat/completions", openAIHello) }()
	<-s.Arrived()

	s.Close() // must not wait for a release that never comes
	s.Close()
	require.Error(t, (<-done).err, "a blocked request is dropped, never answered")
}

func TestStart(t *testing.T) {
	t.Parallel()
	s, err := Start("127.0.0.1:0")
	require.NoError(t, err)
	defer s.Close()

	res := post(t.Context(), s.URL()+"/v1/messages", anthropicHello)
	require.NoError(t, res.err)
	require.Equal(t, "ok", jsonString(t, res.body, "content", 0, "text"))
}

// jsonString digs a string out of a JSON document by keys and indexes.
func jsonString(t *testing.T, doc string, path ...any) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "want an object at %q in %s", p, doc)
			v = m[p]
		case int:
			a, ok := v.([]any)
			require.True(t, ok && p < len(a), "want an array with %d at %v in %s", p+1, path, doc)
			v = a[p]
		}
	}
	s, ok := v.(string)
	require.True(t, ok, "want a string at %v in %s", path, doc)
	return s
}
