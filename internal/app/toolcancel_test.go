package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestAbortCancelsMCPCall aborts a thread through the REST API while its
// write tool's MCP call hangs in `weft serve`: the server is sent
// notifications/cancelled for that very request and its handler's
// context ends, the thread ends aborted, the call was made once, and the
// chain records the call's intent and no result after it (the abort has
// the last word), which the console shows as an intent.
func TestAbortCancelsMCPCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var (
		calls     atomic.Int64
		called    = make(chan struct{})
		ended     = make(chan struct{}) // the handler's context ended
		cancelled = make(chan string, 1)
		once      sync.Once
	)
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "write a note",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			once.Do(func() { close(called) })
			<-ctx.Done()
			close(ended)
			return nil, ctx.Err()
		})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" {
				p, _ := req.GetParams().(*mcp.CancelledParams)
				reason := ""
				if p != nil {
					reason = p.Reason
				}
				select {
				case cancelled <- reason:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)

	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+ts.URL+`", "weft": {"approval": "never"}}}}`), 0o600))
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if !slices.Contains(r.Tools, writeNote) {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"no notes tool"}`}}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"slowly"}`}}}
	})
	dbURL := dbtest.URL(t)
	addr := servetest.Addr(t)
	store, pool, err := Open(ctx, &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	weft := startWeft(t, map[string]string{
		"DATABASE_URL": dbURL, "WEFT_ADDR": addr, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_MCP_CONFIG": cfg, "WEFT_API_TOKEN": "abort-token",
	})
	require.Eventually(t, func() bool { return strings.Contains(weft.stderr.String(), "mcp server connected") },
		time.Minute, 10*time.Millisecond, "weft never connected the MCP server")
	th := createThread(t, dbURL, "Write a note")
	select {
	case <-called:
	case <-time.After(time.Minute):
		t.Fatal("the tool was never called")
	}

	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/threads/"+th.String()+"/abort", strings.NewReader(`{"reason":"too slow"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer abort-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	select {
	case <-cancelled: // the server was told, with the request's id
	case <-time.After(time.Minute):
		t.Fatal("the server was never sent notifications/cancelled")
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the call's handler went on after the cancel")
	}
	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusAborted, done.Status)
	require.EqualValues(t, 1, calls.Load())
	require.Contains(t, weft.stderr.String(), "turn stopped")

	chain, err := store.Stitches(ctx, th, db.StitchPage{})
	require.NoError(t, err)
	var tools []thread.Stitch
	for _, st := range chain {
		if st.Type == thread.StitchToolCall {
			tools = append(tools, st)
		}
	}
	require.Len(t, tools, 1, "the intent, and no result: %+v", tools)
	require.NotEmpty(t, tools[0].Meta().IntentOf)
	last := chain[len(chain)-1]
	require.True(t, last.Meta().Stop, "the abort's stop has the last word")
}
