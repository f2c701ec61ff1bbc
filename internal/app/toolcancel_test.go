package app

import (
	"context"
	"encoding/json"
	"maps"
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
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// hangingServer is an MCP server (Streamable HTTP, in the test process)
// whose one tool, write_note, changes something and hangs until it is
// cancelled: it counts its calls, says so on called, records the
// notifications/cancelled it is sent, and closes ended when its handler's
// context ends.
type hangingServer struct {
	url       string
	calls     atomic.Int64
	called    chan struct{}
	ended     chan struct{}
	cancelled chan struct{}
}

func newHangingServer(t *testing.T) *hangingServer {
	t.Helper()
	h := &hangingServer{called: make(chan struct{}), ended: make(chan struct{}), cancelled: make(chan struct{}, 1)}
	var once sync.Once
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "write a note",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if h.calls.Add(1) == 1 {
				once.Do(func() { close(h.called) })
				<-ctx.Done()
				close(h.ended)
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note written"}}}, nil
		})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" {
				select {
				case h.cancelled <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

// waitCancelled waits for the server to be sent notifications/cancelled
// and for its handler's context to end.
func (h *hangingServer) waitCancelled(t *testing.T) {
	t.Helper()
	for _, ch := range []<-chan struct{}{h.cancelled, h.ended} {
		select {
		case <-ch:
		case <-time.After(time.Minute):
			t.Fatal("the call in flight was never cancelled at the server")
		}
	}
}

func (h *hangingServer) waitCalled(t *testing.T) {
	t.Helper()
	select {
	case <-h.called:
	case <-time.After(time.Minute):
		t.Fatal("the tool was never called")
	}
}

// TestAbortCancelsMCPCall aborts a thread through the REST API while its
// write tool's MCP call hangs in `weft serve`: the server is sent
// notifications/cancelled for that very request and its handler's
// context ends, the thread ends aborted, the call was made once, and the
// chain records the call's intent and no result after it (the abort has
// the last word), which the console shows as an intent.
func TestAbortCancelsMCPCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := servetest.Addr(t)
	w := newNotesWorld(t, map[string]string{"WEFT_ADDR": addr, "WEFT_API_TOKEN": "abort-token"})
	notes, store, weft := w.notes, w.store, w.weft
	th := createThread(t, w.dbURL, "Write a note")
	notes.waitCalled(t)

	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/threads/"+th.String()+"/abort", strings.NewReader(`{"reason":"too slow"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer abort-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	notes.waitCancelled(t)
	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusAborted, done.Status)
	require.EqualValues(t, 1, notes.calls.Load())
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

// notesWorld is `weft serve` (with env) and the hanging notes server,
// whose write_note it calls without asking for approval, connected;
// notesModel answers.
type notesWorld struct {
	notes *hangingServer
	store *db.Store
	weft  *child
	dbURL string
}

func newNotesWorld(t *testing.T, env map[string]string) *notesWorld {
	t.Helper()
	w := &notesWorld{notes: newHangingServer(t), dbURL: dbtest.URL(t)}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+w.notes.url+`", "weft": {"approval": "never"}}}}`), 0o600))
	fake := llmtest.NewServer(t)
	fake.SetDefault(notesModel)
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: w.dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	w.store = store
	all := map[string]string{"DATABASE_URL": w.dbURL, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_MCP_CONFIG": cfg}
	maps.Copy(all, env)
	w.weft = startWeft(t, all)
	w.weft.waitLogged(t, "mcp server connected")
	return w
}

// notesModel calls write_note, then finishes with what the call returned.
func notesModel(r llmtest.Request) llmtest.Reply {
	if res := toolResults(r); len(res) > 0 {
		out, _ := json.Marshal(map[string]string{"result": res[len(res)-1]})
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: string(out)}}}
	}
	if !slices.Contains(r.Tools, writeNote) {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"no notes tool"}`}}}
	}
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"slowly"}`}}}
}

// TestLostLeaseCancelsMCPCall takes a turn's lease from it (as another
// replica would after this one missed its renewals) while its write
// tool's MCP call hangs in `weft serve`: the turn's heartbeat sees the
// lease gone and cancels the call (the server is sent
// notifications/cancelled); once the taken lease lapses, the thread is
// taken up again and the turn resumes without making the call again: the
// model reads the unknown outcome, and the server saw one call.
func TestLostLeaseCancelsMCPCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newNotesWorld(t, map[string]string{"WEFT_ADDR": servetest.Addr(t), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms"})
	notes, store, weft := w.notes, w.store, w.weft
	th := createThread(t, w.dbURL, "Write a note")
	notes.waitCalled(t)

	_, err := store.Pool().Exec(ctx, `UPDATE threads SET lease_owner = 'another-replica' WHERE thread_id = $1`, th)
	require.NoError(t, err)
	notes.waitCancelled(t)

	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusCompleted, done.Status)
	var result struct{ Result string }
	require.NoError(t, json.Unmarshal(done.Result, &result))
	require.Equal(t, agent.UnknownOutcome, result.Result)
	require.EqualValues(t, 1, notes.calls.Load(), "the server saw exactly one call")
	require.Contains(t, weft.stderr.String(), "turn lease lost")
}
