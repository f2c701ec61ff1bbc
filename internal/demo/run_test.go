package demo_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/demo"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestDemo plays `weft demo -exit` on a fresh database and checks what the
// story left: one thread on both platforms, its stitches in order, the
// clarification answered, and what each fake was sent.
func TestDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.EmptyURL(t) // the demo applies the schema itself
	w := demo.New(true)
	t.Cleanup(w.Close)
	var stdout, stderr bytes.Buffer
	out, err := demo.Run(ctx, w, demo.Options{Exit: true, Addr: servetest.Addr(t)}, env(map[string]string{"DATABASE_URL": url}), &stdout, &stderr)
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
	}, types)
	require.Equal(t, thread.PlatformLinear, chain[1].Source)
	for _, r := range w.Model.Requests() {
		require.True(t, r.Stream, "the scripted model's answers stream, for the console to show")
	}
	require.Equal(t, "save_memory", chain[4].ToolName)
	require.False(t, chain[4].ToolError, chain[4].Content)
	require.Equal(t, "staging", chain[11].Content)
	require.Contains(t, chain[12].Content, "Staging it is")

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
	require.Len(t, sent, 4)
	require.Contains(t, sent[0].Content, "Continuing **ENG-42: Login redirect loses the return URL** here.")
	require.Contains(t, sent[1].Content, "In Linear (ENG-42) you asked: “why does the login redirect drop the return URL?”",
		"the follow-up in Discord saw the Linear history")
	require.Contains(t, sent[2].Content, "Which environment should I deploy the fix to first?\n\n1. staging\n2. production")
	require.Contains(t, sent[3].Content, "Staging it is")

	// What was printed: each step, the thread, and the console's link.
	for _, want := range []string{"1. Linear:", "2. Discord: /continue ENG-42", "3. Discord:", "4. Discord:",
		"weft waits for the answer", th.ID.String(), "/console/login?token="} {
		require.Contains(t, stdout.String(), want)
	}
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}
