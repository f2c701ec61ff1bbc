package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
)

// notesServer is a small MCP server (Streamable HTTP, in process) with one
// tool that changes something: write_note, which counts its calls.
type notesServer struct {
	url    string
	writes atomic.Int64
	listed atomic.Int64 // tools/list requests answered
}

func newNotesServer(t *testing.T) *notesServer {
	t.Helper()
	n := &notesServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "write a note",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n.writes.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note written"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			n.listed.Add(1) // once the list is answered
		}
	}))
	t.Cleanup(ts.Close)
	n.url = ts.URL
	return n
}

const writeNote = "mcp__notes__write_note"

// A tool call needing approval, through `weft serve` with the Discord fake
// and a real MCP server: the request goes out with buttons; Approve runs
// the tool once and the model answers; Deny never runs it; the REST API
// approves too; a second click is told who decided.
func TestApprovalEndToEnd(t *testing.T) {
	t.Parallel()
	notes := newNotesServer(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+notes.url+`"}}}`), 0o600))
	w := newDiscordWorldEnv(t, map[string]string{"WEFT_MCP_CONFIG": cfg, "WEFT_API_TOKEN": "e2e-token"})
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		last := r.Last()
		if last.Role == "tool" {
			return llmtest.Reply{Text: "Done: " + last.Content}
		}
		if !slices.Contains(r.Tools, writeNote) {
			return llmtest.Reply{Text: "no notes tool"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"remember the milk"}`}}}
	})
	require.Eventually(t, func() bool { return notes.listed.Load() > 0 }, 30*time.Second, 10*time.Millisecond, "weft never listed the MCP tools")

	ask := func(text string) (string, discordtest.SentMessage, thread.Approval) {
		ch := w.mentionBot(text)
		msg := w.post(t, ch, func(m discordtest.SentMessage) bool { return len(m.Buttons) == 2 })
		require.Contains(t, msg.Content, "write_note")
		require.Contains(t, msg.Content, "remember the milk")
		th, err := w.store.ThreadByDiscordThread(context.Background(), ch)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			th, err = w.store.Thread(context.Background(), th.ID)
			require.NoError(t, err)
			return th.Status == thread.StatusWaiting && th.WaitingReason == thread.WaitingApproval && th.LeaseOwner == ""
		}, 30*time.Second, 10*time.Millisecond)
		list, err := w.store.ThreadApprovals(context.Background(), th.ID)
		require.NoError(t, err)
		require.Len(t, list, 1)
		return ch, msg, list[0]
	}
	click := func(ch string, msg discordtest.SentMessage, id, token string, user discordtest.User, button int) (int, map[string]any) {
		return w.interact(t, discordtest.ButtonInteraction(w.discord.ApplicationID(), id, token, w.guild, ch, user, msg.ID,
			msg.Content, msg.Buttons[button].CustomID))
	}

	// Approve with the button: the tool runs once, the model answers.
	ch, msg, a := ask("note: remember the milk")
	require.Zero(t, notes.writes.Load(), "nothing runs before the decision")
	status, resp := click(ch, msg, "700000000000000001", "tok-1", w.ada, 0)
	require.Equal(t, http.StatusOK, status)
	require.EqualValues(t, 7, resp["type"], "the message is updated")
	require.Contains(t, resp["data"].(map[string]any)["content"], "Approved** by ada")
	w.post(t, ch, func(m discordtest.SentMessage) bool { return m.Content == "Done: note written" })
	require.EqualValues(t, 1, notes.writes.Load())
	grace := discordtest.User{ID: "200000000000000002", Name: "grace"}
	status, resp = click(ch, msg, "700000000000000002", "tok-2", grace, 1)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "This request was already approved by ada.", resp["data"].(map[string]any)["content"])
	w.settled(t, a.ThreadID)
	require.EqualValues(t, 1, notes.writes.Load(), "a later click changes nothing")

	// Deny: the tool never runs and the model reads why.
	ch, msg, _ = ask("note: remember the milk, again")
	status, _ = click(ch, msg, "700000000000000003", "tok-3", w.ada, 1)
	require.Equal(t, http.StatusOK, status)
	w.post(t, ch, func(m discordtest.SentMessage) bool {
		return strings.HasPrefix(m.Content, "Done: error: this call was not made: denied by ada (discord)")
	})
	require.EqualValues(t, 1, notes.writes.Load())

	// Approve through the REST API.
	ch, msg, a = ask("note: once more")
	req, err := http.NewRequest(http.MethodPost, w.base+"/api/v1/threads/"+a.ThreadID.String()+"/approvals/"+a.ID.String(),
		strings.NewReader(`{"decision":"approve","reason":"fine"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer e2e-token")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res.Body.Close()
	w.post(t, ch, func(m discordtest.SentMessage) bool { return m.Content == "Done: note written" })
	require.EqualValues(t, 2, notes.writes.Load())
	// Decided elsewhere, the Discord message says so and loses its buttons.
	w.post(t, ch, func(m discordtest.SentMessage) bool {
		return m.ID == msg.ID && strings.Contains(m.Content, "✅ **Approved** by ") &&
			strings.HasSuffix(m.Content, " (api)") && len(m.Buttons) == 0
	})
}

// A request no one answers within WEFT_APPROVAL_TIMEOUT is denied by the
// sweep, and the model is told why; the tool never runs.
func TestApprovalTimeoutEndToEnd(t *testing.T) {
	t.Parallel()
	notes := newNotesServer(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+notes.url+`"}}}`), 0o600))
	w := newDiscordWorldEnv(t, map[string]string{"WEFT_MCP_CONFIG": cfg, "WEFT_APPROVAL_TIMEOUT": "1s", "WEFT_SWEEP_INTERVAL": "200ms"})
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if last := r.Last(); last.Role == "tool" {
			return llmtest.Reply{Text: "Done: " + last.Content}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"x"}`}}}
	})
	require.Eventually(t, func() bool { return notes.listed.Load() > 0 }, 30*time.Second, 10*time.Millisecond)
	ch := w.mentionBot("note: x")
	w.post(t, ch, func(m discordtest.SentMessage) bool {
		return strings.HasPrefix(m.Content, "Done: error: this call was not made: denied: no one decided on it in time")
	})
	require.Zero(t, notes.writes.Load())
}

// post waits until the bot posted a message in ch that ok accepts.
func (w *discordWorld) post(t *testing.T, ch string, ok func(discordtest.SentMessage) bool) discordtest.SentMessage {
	t.Helper()
	var got discordtest.SentMessage
	require.Eventually(t, func() bool {
		for _, m := range w.discord.Sent(ch) {
			if ok(m) {
				got = m
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "no such post in %s: %v", ch, w.discord.Sent(ch))
	return got
}

// A Linear session whose agent calls a write tool: the request is an
// elicitation with the select signal and Approve / Deny; the person's
// choice, a prompt, resumes the turn and the tool runs once.
func TestLinearApprovalEndToEnd(t *testing.T) {
	t.Parallel()
	notes := newNotesServer(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+notes.url+`"}}}`), 0o600))
	w := newLinearWorldWith(t, map[string]string{"WEFT_MCP_CONFIG": cfg}, nil)
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		for _, m := range slices.Backward(r.Messages) {
			if m.Role == "tool" {
				return llmtest.Reply{Text: "Done: " + m.Content}
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: writeNote, Arguments: `{"text":"ship it"}`}}}
	})
	require.Eventually(t, func() bool { return notes.listed.Load() > 0 }, 30*time.Second, 10*time.Millisecond)
	s := w.mention(t, "Write a note: ship it")
	var ask lineartest.Activity
	require.Eventually(t, func() bool {
		for _, a := range w.linear.Activities(s.SessionID) {
			if a.Type == "elicitation" {
				ask = a
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, "select", ask.Signal)
	require.Equal(t, []string{"Approve", "Deny"}, ask.Options)
	require.Contains(t, ask.Body, "write_note")
	require.Zero(t, notes.writes.Load())

	w.deliver(t, w.signer.Prompted(s, uuid.NewString(), "Approve"))
	require.Eventually(t, func() bool {
		for _, a := range w.linear.Activities(s.SessionID) {
			if a.Type == "response" && a.Body == "Done: note written" {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
	require.EqualValues(t, 1, notes.writes.Load())
	list, err := w.store.ThreadApprovals(context.Background(), w.thread(t, s.SessionID).ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalApproved, list[0].Status)
	require.Equal(t, "linear", list[0].DecidedVia)
}
