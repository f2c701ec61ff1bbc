package app

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
)

// TestServeStreamsAnswerToTheAPI runs weft serve on a model that streams
// slowly and follows the thread's event stream: the answer shows as
// partial text while the model writes it, then as the llm_call stitch,
// then its partial text ends, and the thread completes.
func TestServeStreamsAnswerToTheAPI(t *testing.T) {
	t.Parallel()
	const apiToken = "stream-token"
	model := llmtest.NewServer(t)
	step := make(chan struct{})
	model.Enqueue(llmtest.Reply{Text: "The cache layer is deployed to staging.", Step: step})
	addr := servetest.Addr(t)
	base := servetest.Serve(t, addr, func(ctx context.Context) error {
		return runServe(ctx, env(map[string]string{
			"DATABASE_URL": dbtest.URL(t), "WEFT_ADDR": addr, "WEFT_API_TOKEN": apiToken,
			"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model.OpenAIBaseURL(),
		}), &strings.Builder{})
	})
	do := func(ctx context.Context, method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}

	resp := do(t.Context(), http.MethodPost, "/api/v1/threads", `{"goal":"Deploy the cache layer to staging"}`)
	var created struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp = do(ctx, http.MethodGet, "/api/v1/threads/"+created.ID+"/events", "")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	next := func() (event, data string) {
		t.Helper()
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && event != "":
				return event, data
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return "", ""
	}
	// The catch-up: the thread's stitches, the answer written so far when
	// the model's first word was stored before the stream opened, then the
	// status.
	for ev, _ := next(); ev != "status"; ev, _ = next() {
		require.Contains(t, []string{"stitch", "partial"}, ev, "the catch-up: stitches and the text so far, then the status")
	}

	// The model has sent "The " and waits: the stream is watched now, so
	// each word let through reaches it as partial text.
	<-model.Arrived()
	step <- struct{}{}
	var p struct {
		Text string `json:"text"`
	}
	for p.Text == "" || p.Text == "The " {
		ev, data := next()
		if ev == "status" {
			continue // pending to running
		}
		require.Equal(t, "partial", ev, data)
		require.NoError(t, json.Unmarshal([]byte(data), &p))
	}
	require.True(t, strings.HasPrefix(p.Text, "The cache "), p.Text)

	close(step) // the rest of the answer at once
	var seen []string
	for !(len(seen) > 0 && seen[len(seen)-1] == "status completed") {
		ev, data := next()
		switch ev {
		case "stitch":
			var st struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &st))
			if st.Type == "llm_call" {
				require.Equal(t, "The cache layer is deployed to staging.", st.Content)
			}
			seen = append(seen, "stitch "+st.Type)
		case "status":
			var s struct {
				Status string `json:"status"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &s))
			seen = append(seen, "status "+s.Status)
		default:
			seen = append(seen, ev)
		}
	}
	require.Contains(t, seen, "stitch llm_call")
	require.Contains(t, seen, "partial_end")
	for i, s := range seen {
		if s == "partial_end" {
			require.Contains(t, seen[:i], "stitch llm_call", "the text ends once its stitch was sent: %v", seen)
		}
	}
	require.True(t, model.Requests()[0].Stream)
}
