package demo_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/demo"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// notesServerArg makes the test binary the demo's notes MCP server (as
// `weft demo -mcp-notes FILE` makes weft): the demo's weft starts it.
const notesServerArg = "demo-notes-server"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == notesServerArg {
		if err := demo.ServeNotes(context.Background(), os.Args[2]); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDemo plays `weft demo -exit` on a fresh database and checks what the
// story left: one thread on both platforms, its stitches in order, the
// clarification answered, and what each fake was sent.
func TestDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.EmptyURL(t) // the demo applies the schema itself
	w, err := demo.New(true)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	var stdout, stderr bytes.Buffer
	o := demo.Options{Exit: true, Addr: servetest.Addr(t), NotesServer: []string{os.Args[0], notesServerArg}}
	out, err := demo.Run(ctx, w, o, env(map[string]string{"DATABASE_URL": url}), &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)

	store, pool, err := app.Open(ctx, &app.Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	// One weft thread, attached to the Linear session and the Discord thread.
	th, err := store.ThreadByLinearSession(ctx, out.SessionID)
	require.NoError(t, err)
	require.Equal(t, out.ThreadID, th.ID)
	lin, err := store.LinearAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, "ENG-42", lin.IssueIdentifier)
	dis, err := store.DiscordAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, out.DiscordThreadID, dis.DiscordThreadID)
	require.Equal(t, thread.StatusWaiting, th.Status)
	require.Equal(t, thread.WaitingIdle, th.WaitingReason, "the clarification was answered")
	require.True(t, out.Asked)

	chain, err := store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	var types []thread.StitchType
	for _, s := range chain {
		types = append(types, s.Type)
	}
	require.Equal(t, []thread.StitchType{
		thread.StitchSystemPrompt, thread.StitchInitialPrompt, // the Linear mention
		thread.StitchLLMCall, thread.StitchAgentThought, thread.StitchToolCall, thread.StitchLLMCall, // thought, action, response
		thread.StitchDiscordMessage, thread.StitchLLMCall, // the follow-up in Discord
		thread.StitchDiscordMessage, thread.StitchLLMCall, thread.StitchClarificationRequest, // asked back
		thread.StitchDiscordMessage, thread.StitchLLMCall, // answered
		thread.StitchDiscordMessage, thread.StitchLLMCall, thread.StitchApprovalRequest, // a write tool waits for approval
		thread.StitchApprovalDecision, thread.StitchToolCall, thread.StitchToolCall, thread.StitchLLMCall, // approved: intent, result, answer
	}, types)
	require.Equal(t, thread.PlatformLinear, chain[1].Source)
	for _, r := range w.Model.Requests() {
		require.True(t, r.Stream, "the scripted model's answers stream, for the console to show")
	}
	require.Equal(t, "save_memory", chain[4].ToolName)
	require.False(t, chain[4].ToolError, chain[4].Content)
	require.Equal(t, "staging", chain[11].Content)
	require.Contains(t, chain[12].Content, "Staging it is")
	require.Contains(t, chain[15].Content, "write_note")
	require.Contains(t, chain[16].Content, "approved by ada (discord)")
	for _, st := range chain[17:19] {
		require.Equal(t, "mcp__notes__write_note", st.ToolName)
		require.False(t, st.ToolError, st.Content)
	}
	require.Contains(t, chain[18].Content, "Wrote note 1")
	require.Contains(t, chain[19].Content, "Done: Wrote note 1")

	// The notes MCP server: exactly one call, with the model's arguments,
	// made after Ada's click.
	notes, err := demo.ReadNotes(w.NotesFile)
	require.NoError(t, err)
	require.Len(t, notes, 1, "the approved tool ran once")
	require.Contains(t, notes[0].Text, "ENG-42")
	require.True(t, out.Approved)
	require.Len(t, out.Approval.Buttons, 2, "Approve and Deny")

	// Linear: thought (the acknowledgement), thought, action, response,
	// then the link to Discord; nothing of the Discord part.
	acts := w.Linear.Activities(out.SessionID)
	require.Equal(t, []string{"thought", "thought", "action", "response", "response"}, lineartest.Types(acts))
	require.Equal(t, "save_memory", acts[2].Action)
	require.Contains(t, acts[3].Body, "Carry `return_to` in the OAuth `state` parameter")
	require.Contains(t, acts[4].Body, "https://discord.com/channels/")
	require.Contains(t, acts[4].Body, out.DiscordThreadID)

	// Discord: the summary, the answer from the Linear history, the question
	// with its options, and the answer to the answer.
	sent := w.Discord.Sent(out.DiscordThreadID)
	require.Len(t, sent, 6)
	require.Contains(t, sent[0].Content, "Continuing **ENG-42: Login redirect loses the return URL** here.")
	require.Contains(t, sent[1].Content, "In Linear (ENG-42) you asked: “why does the login redirect drop the return URL?”",
		"the follow-up in Discord saw the Linear history")
	require.Contains(t, sent[2].Content, "Which environment should I deploy the fix to first?\n\n1. staging\n2. production")
	require.Contains(t, sent[3].Content, "Staging it is")
	// The request as asked (its buttons, Approve first); once decided its
	// message loses them, on its own time, so the buttons are checked on
	// what the click was made on.
	require.Equal(t, out.Approval.ID, sent[4].ID, "the approval request")
	require.Equal(t, "Approve", out.Approval.Buttons[0].Label)
	require.Contains(t, sent[4].Content, "write_note")
	require.Contains(t, sent[5].Content, "Done: Wrote note 1")

	// Slack: the mention's thread, answered twice in it, streamed; the
	// first answer from the memory saved in Linear, the second from the
	// thread's history.
	sth, err := store.ThreadBySlackThread(ctx, slacktest.TeamID, "C0DEMOENG", out.SlackTS)
	require.NoError(t, err)
	require.Equal(t, out.SlackThreadID, sth.ID)
	require.NotEqual(t, th.ID, sth.ID)
	schain, err := store.Stitches(ctx, sth.ID, db.StitchPage{})
	require.NoError(t, err)
	types = nil
	for _, s := range schain {
		types = append(types, s.Type)
	}
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt, thread.StitchLLMCall,
		thread.StitchSlackMessage, thread.StitchLLMCall}, types)
	var answers []string
	for _, m := range w.Slack.BotMessages("C0DEMOENG") {
		if m.ThreadTS == out.SlackTS && m.TS != out.SlackTS {
			answers = append(answers, m.Text)
		}
	}
	memory := "Login redirects go through /auth/callback; return_to must survive the SSO round trip."
	require.Equal(t, []string{"From what I saved while working on ENG-42: " + memory, "In one line: " + memory}, answers)
	require.Equal(t, schain[2].Content, answers[0])
	require.Len(t, w.Slack.Calls("chat.startStream"), 2, "both answers streamed into Slack")
	require.Len(t, w.Slack.Calls("chat.stopStream"), 2)

	// What was printed: each step, the thread, and the console's link.
	for _, want := range []string{"1. Linear:", "2. Discord: /continue ENG-42", "3. Discord:", "4. Discord:",
		"weft waits for the answer", "5. Discord:", "Ada   click     Approve", "holds 1 note(s)", "6. Slack:",
		"chat.startStream", th.ID.String(), sth.ID.String(), "/console/login?token="} {
		require.Contains(t, stdout.String(), want)
	}
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}
