package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestThreadCreateAndShow(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Enqueue(
		llmtest.Reply{Text: "Saving a note first.", ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"standup","content":"fridays"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"standup drafted"}`}}},
	)
	e := env(map[string]string{
		"DATABASE_URL": dbtest.URL(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_MODEL": "scripted", "WEFT_LOG_LEVEL": "error",
	})
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"weft", "thread", "create", "--goal", "Draft the standup"}, e, &out, &bytes.Buffer{}))
	text := out.String()
	require.Contains(t, text, "system_prompt")
	require.Contains(t, text, "initial_prompt")
	require.Contains(t, text, "save_memory(")
	require.Contains(t, text, "thread_result")
	require.Contains(t, text, "completed")
	require.Equal(t, 2, fake.Calls())

	id := strings.Fields(strings.SplitN(text, "\n", 2)[0])[1]
	var show bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"weft", "thread", "show", id}, e, &show, &bytes.Buffer{}))
	require.Contains(t, show.String(), "autonomous  completed")
	require.Contains(t, show.String(), `result: {"result": "standup drafted"}`)
	for _, typ := range []string{"system_prompt", "initial_prompt", "llm_call", "agent_thought", "tool_call", "thread_result"} {
		require.Contains(t, show.String(), typ)
	}

	err := run(context.Background(), []string{"weft", "thread", "create"}, e, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"weft", "thread", "show", "not-a-uuid"}, e, &bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
}

func TestThreadCreateWithoutProvider(t *testing.T) {
	t.Parallel()
	e := env(map[string]string{"DATABASE_URL": dbtest.URL(t), "WEFT_LOG_LEVEL": "error"})
	var out bytes.Buffer
	err := run(context.Background(), []string{"weft", "thread", "create", "--goal", "anything"}, e, &out, &bytes.Buffer{})
	require.Error(t, err)
	require.Contains(t, out.String(), "No language model is configured")
	require.Contains(t, out.String(), "thread")
}

// weft thread reply answers a thread waiting for approval (the reply and
// its turn recorded, for weft serve); a thread waiting for nothing is
// refused.
func TestThreadReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	e := env(map[string]string{"DATABASE_URL": url, "WEFT_LOG_LEVEL": "error"})
	var out bytes.Buffer
	pool, err := db.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := db.New(pool, dbtest.Logger(t))
	th := dbtest.Thread(ctx, t, store, nil)
	dbtest.PendingApproval(ctx, t, store, th.ID)
	idle := dbtest.Thread(ctx, t, store, nil)

	out.Reset()
	require.NoError(t, run(ctx, []string{"weft", "thread", "reply", th.ID.String(), "deny:", "wrong", "file"}, e, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "reply recorded")
	chain, err := store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	last := chain[len(chain)-1]
	require.Equal(t, "deny: wrong file", last.Content)
	require.Equal(t, thread.PlatformCLI, last.Source)

	err = run(ctx, []string{"weft", "thread", "reply", idle.ID.String(), "approve"}, e, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorContains(t, err, "not waiting for an answer")
	err = run(ctx, []string{"weft", "thread", "reply", th.ID.String()}, e, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUsage)
}
