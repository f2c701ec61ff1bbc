package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
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
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// blockingServer is an MCP server (Streamable HTTP, in the test process)
// whose one tool, write_note, changes something and does not return: it
// counts the call, says so on called, and waits until its caller goes away.
type blockingServer struct {
	url    string
	calls  atomic.Int64
	listed atomic.Int64
	called chan struct{} // closed on the first call
}

func newBlockingServer(t *testing.T) *blockingServer {
	t.Helper()
	b := &blockingServer{called: make(chan struct{})}
	var once sync.Once
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "write a note",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b.calls.Add(1)
			once.Do(func() { close(b.called) })
			select {
			case <-ctx.Done():
			case <-release:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note written"}}}, nil
		})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				b.listed.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { close(release); ts.Close() })
	b.url = ts.URL
	return b
}

// toolResults are the tool results a model request carries.
func toolResults(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestCrashMidToolCallIsUnknownOutcome kills `weft serve` with SIGKILL while
// a write tool's MCP call is in flight, after its intent was recorded. A
// second `weft serve` resumes the turn without calling the tool again: the
// model reads that the outcome is unknown, the stitch is marked on the
// console, and the server saw exactly one call.
func TestCrashMidToolCallIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := dbtest.URL(t)
	notes := newBlockingServer(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+notes.url+`", "weft": {"approval": "never"}}}}`), 0o600))
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if res := toolResults(r); len(res) > 0 {
			out, _ := json.Marshal(map[string]string{"result": res[len(res)-1]})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: string(out)}}}
		}
		if !slices.Contains(r.Tools, writeNote) {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"no notes tool"}`}}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"once only"}`}}}
	})
	addr := servetest.Addr(t)
	weftEnv := map[string]string{
		"DATABASE_URL": dbURL, "WEFT_ADDR": addr, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"WEFT_MCP_CONFIG": cfg, "WEFT_API_TOKEN": "crash-token",
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)
	require.Eventually(t, func() bool { return notes.listed.Load() > 0 }, time.Minute, 10*time.Millisecond, "weft never listed the MCP tools")
	th := createThread(t, dbURL, "Write a note, then finish")

	select {
	case <-notes.called:
	case <-time.After(time.Minute):
		t.Fatal("the tool was never called")
	}
	// The intent is recorded before the call is made.
	chain, err := store.Stitches(ctx, th, db.StitchPage{})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(chain, func(s thread.Stitch) bool { return s.Meta().IntentOf != "" }), "no intent recorded")
	first.kill(t)
	startWeft(t, weftEnv)

	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusCompleted, done.Status)
	var result struct{ Result string }
	require.NoError(t, json.Unmarshal(done.Result, &result))
	require.Equal(t, agent.UnknownOutcome, result.Result)
	require.EqualValues(t, 1, notes.calls.Load(), "the server saw exactly one call")

	// The model's next request carries the unknown outcome as the result.
	var resumed []llmtest.Request
	for _, r := range fake.Requests() {
		if len(toolResults(r)) > 0 {
			resumed = append(resumed, r)
		}
	}
	require.Len(t, resumed, 1)
	require.Equal(t, []string{agent.UnknownOutcome}, toolResults(resumed[0]))
	require.Equal(t, 2, fake.Calls(), "the recorded model call was not made again")

	// The stitch is marked, in the store and on the console.
	chain, err = store.Stitches(ctx, th, db.StitchPage{})
	require.NoError(t, err)
	var marked int
	for _, s := range chain {
		if s.Type == thread.StitchToolCall && s.Meta().Unknown {
			marked++
			require.True(t, s.ToolError)
			require.Equal(t, writeNote, s.ToolName)
		}
	}
	require.Equal(t, 1, marked)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar}
	resp, err := c.Get("http://" + addr + "/console/login?token=" + url.QueryEscape("crash-token"))
	require.NoError(t, err)
	resp.Body.Close()
	resp, err = c.Get("http://" + addr + "/console/threads/" + th.String())
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `<span class="mark error unknown"`)
}

// asMCPServer set to 1 makes the test binary serveDyingMCP.
const asMCPServer = "WEFT_TEST_AS_MCP"

// serveDyingMCP is a stdio MCP server with two tools: die, which exits
// the process in the middle of its call, and echo, which is read-only and
// echoes its text. It serves until its client closes stdin.
func serveDyingMCP() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "local", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "die", Description: "exit mid-call", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "echo", Description: "echo text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(r.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// TestStdioServerDiesMidCall: a stdio MCP server of `weft serve`'s exits
// in the middle of a call. weft logs it, the model reads a tool error,
// and weft keeps working: it starts the server again, and the same turn's
// next call of it answers.
func TestStdioServerDiesMidCall(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.URL(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	conf, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"local": map[string]any{
		"command": os.Args[0], "env": map[string]string{asMCPServer: "1"}, "weft": map[string]string{"approval": "never"}}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, conf, 0o600))
	var weft atomic.Pointer[child]
	// connected waits until weft logged n connections of the server.
	connected := func(n int) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return weft.Load().stderr.Wait(ctx, func(s string) bool { return strings.Count(s, "mcp server connected") >= n })
	}
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		switch res := toolResults(r); len(res) {
		case 0:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__local__die", Arguments: `{}`}}}
		case 1:
			// The next call waits for the server to be back.
			_ = connected(2)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__local__echo", Arguments: `{"text":"still here"}`}}}
		default:
			out, _ := json.Marshal(map[string]string{"result": strings.Join(res, " | ")})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: string(out)}}}
		}
	})
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	weft.Store(startWeft(t, map[string]string{
		"DATABASE_URL": dbURL, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_MCP_CONFIG": cfg,
	}))
	require.NoError(t, connected(1), "weft never connected the stdio server")
	th := createThread(t, dbURL, "Call die, then echo, then finish")

	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusCompleted, done.Status)
	var result struct{ Result string }
	require.NoError(t, json.Unmarshal(done.Result, &result))
	died, echoed, ok := strings.Cut(result.Result, " | ")
	require.True(t, ok, result.Result)
	require.True(t, strings.HasPrefix(died, "error: "), "the model reads a tool error: %s", died)
	require.Contains(t, died, "the call to die failed")
	require.Equal(t, "still here", echoed, "the server was started again and answers")
	require.Contains(t, weft.Load().stderr.String(), "mcp server unavailable", "the death is logged")
	select {
	case <-weft.Load().exited:
		t.Fatal("weft serve exited")
	default:
	}
}
