package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// A Slack conversation whose agent calls a write tool of a real MCP
// server, through `weft serve` with the Slack fake, over the signed
// interactivity door and over Socket Mode: the request is a message with
// Approve and Deny buttons; Approve runs the tool once, the message then
// says who decided and has no buttons, and the model answers; the click
// delivered again changes nothing; a later click is told who decided;
// Deny never runs the tool. Over HTTP a forged or stale click is refused
// with 401 and decides nothing.
func TestSlackApprovalEndToEnd(t *testing.T) {
	t.Parallel()
	overHTTPAndSocket(t, func(t *testing.T, socket bool) {
		notes := newNotesServer(t)
		cfg := filepath.Join(t.TempDir(), "mcp.json")
		require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"notes": {"url": "`+notes.url+`"}}}`), 0o600))
		w := newSlackWorldEnv(t, socket, map[string]string{"WEFT_MCP_CONFIG": cfg, "WEFT_API_TOKEN": "e2e-token"})
		w.slack.InteractTo(w.base+"/webhooks/slack/commands", w.base+"/webhooks/slack/interactions")
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
		ctx := context.Background()

		ask := func(text string) (slacktest.Message, thread.Approval) {
			q := w.mention(text)
			var msg slacktest.Message
			require.Eventually(t, func() bool {
				for _, m := range w.slack.BotMessages(w.channel) {
					if m.ThreadTS == q.TS && strings.Contains(string(m.Blocks), slackapi.ApprovalActionPrefix) {
						msg = m
						return true
					}
				}
				return false
			}, 30*time.Second, 10*time.Millisecond, "no request with buttons")
			require.Contains(t, msg.Text, "write_note")
			require.Contains(t, msg.Text, "remember the milk")
			th := w.thread(t, q.TS)
			require.Eventually(t, func() bool {
				got, err := w.store.Thread(ctx, th.ID)
				require.NoError(t, err)
				return got.Status == thread.StatusWaiting && got.WaitingReason == thread.WaitingApproval && got.LeaseOwner == ""
			}, 30*time.Second, 10*time.Millisecond)
			list, err := w.store.ThreadApprovals(ctx, th.ID)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Contains(t, string(msg.Blocks), `"action_id":"weft_approval:`+list[0].ID.String()+`:approve"`)
			require.Contains(t, string(msg.Blocks), `"style":"primary"`)
			require.Contains(t, string(msg.Blocks), `"style":"danger"`)
			return msg, list[0]
		}
		click := func(u slacktest.User, msg slacktest.Message, a thread.Approval, decision string) slacktest.Interaction {
			in, err := w.slack.BlockAction(u, msg, slackapi.ApprovalActionID(a.ID.String(), decision), decision)
			require.NoError(t, err)
			return in
		}
		status := func(a thread.Approval) thread.ApprovalStatus {
			list, err := w.store.ThreadApprovals(ctx, a.ThreadID)
			require.NoError(t, err)
			return list[0].Status
		}
		inThread := func(threadTS, text string) {
			require.Eventually(t, func() bool {
				for _, m := range w.slack.BotMessages(w.channel) {
					if m.ThreadTS == threadTS && strings.HasPrefix(m.Text, text) {
						return true
					}
				}
				return false
			}, 30*time.Second, 10*time.Millisecond, "no %q in the thread", text)
		}

		msg, a := ask("note: remember the milk")
		require.Zero(t, notes.writes.Load(), "nothing runs before the decision")
		approve := click(w.ada, msg, a, "approve")
		if !socket {
			// Forged (a body its signature is not for) and stale (signed
			// ten minutes ago): 401, and nothing decided.
			body := []byte(url.Values{"payload": {mustMarshal(t, approve)}}.Encode())
			for name, h := range map[string]http.Header{
				"forged": slacktest.Sign(append([]byte("x"), body...), time.Now()),
				"stale":  slacktest.Sign(body, time.Now().Add(-10*time.Minute)),
			} {
				req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/slack/interactions", strings.NewReader(string(body)))
				require.NoError(t, err)
				req.Header = h
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
				require.Equal(t, thread.ApprovalPending, status(a), name)
			}
		}
		reply, err := w.slack.Interact(approve, 0)
		require.NoError(t, err)
		require.True(t, reply.Acked, "%+v", reply)
		// Acknowledged only once stored.
		require.Equal(t, thread.ApprovalApproved, status(a))
		list, err := w.store.ThreadApprovals(ctx, a.ThreadID)
		require.NoError(t, err)
		require.Equal(t, "slack", list[0].DecidedVia)
		require.Equal(t, w.ada.ID, list[0].DecidedBy)
		inThread(msg.ThreadTS, "Done: note written")
		require.EqualValues(t, 1, notes.writes.Load())
		updated := w.slack.Thread(w.channel, msg.ThreadTS)
		i := slices.IndexFunc(updated, func(m slacktest.Message) bool { return m.TS == msg.TS })
		require.GreaterOrEqual(t, i, 0)
		require.Contains(t, updated[i].Text, "*Approved* by ada")
		require.Contains(t, string(updated[i].Blocks), "*Approved* by ada")
		require.NotContains(t, string(updated[i].Blocks), slackapi.ApprovalActionPrefix, "the buttons are gone")

		// The click delivered again changes nothing and says nothing.
		reply, err = w.slack.Interact(approve, 1)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		require.Empty(t, w.slack.Ephemerals())
		// Someone else clicks Deny on the buttons they still see: told
		// who decided, to them alone.
		grace := slacktest.User{ID: "U0GRACE", Name: "grace"}
		reply, err = w.slack.Interact(click(grace, msg, a, "deny"), 0)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		eph := w.slack.Ephemerals()
		require.Len(t, eph, 1)
		require.Equal(t, grace.ID, eph[0].User)
		require.Equal(t, "This request was already approved by ada.", eph[0].Text)
		w.settled(t, a.ThreadID)
		require.EqualValues(t, 1, notes.writes.Load(), "a later click changes nothing")
		require.Equal(t, thread.ApprovalApproved, status(a))

		// Deny: the tool never runs and the model reads why.
		msg, a = ask("note: remember the milk, again")
		reply, err = w.slack.Interact(click(w.ada, msg, a, "deny"), 0)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		inThread(msg.ThreadTS, "Done: error: this call was not made: denied by ada (slack)")
		require.EqualValues(t, 1, notes.writes.Load())
		require.Equal(t, thread.ApprovalDenied, status(a))

		// Decided elsewhere (the REST API): the Slack message says who
		// decided and loses its buttons.
		msg, a = ask("note: once more")
		req, err := http.NewRequest(http.MethodPost, w.base+"/api/v1/threads/"+a.ThreadID.String()+"/approvals/"+a.ID.String(),
			strings.NewReader(`{"decision":"approve"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer e2e-token")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		inThread(msg.ThreadTS, "Done: note written")
		require.EqualValues(t, 2, notes.writes.Load())
		require.Eventually(t, func() bool {
			for _, m := range w.slack.Thread(w.channel, msg.ThreadTS) {
				if m.TS == msg.TS {
					return strings.Contains(string(m.Blocks), "*Approved* by ") && strings.Contains(m.Text, "(api)") &&
						!strings.Contains(string(m.Blocks), slackapi.ApprovalActionPrefix)
				}
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "the request's message never showed the decision")
	})
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
