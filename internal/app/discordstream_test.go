package app

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
)

// TestDiscordStreamsAnswer: an answer a model streams is posted in the
// Discord thread with its first words (the typing indicator shown until
// then), edited as it grows, and finished by its delivery's edit: one
// message holding the recorded answer. An answer past 2,000 characters
// continues in further messages as it grows.
func TestDiscordStreamsAnswer(t *testing.T) {
	t.Parallel()
	w := newDiscordWorld(t)
	ctx := context.Background()
	step := make(chan struct{})
	w.llm.Enqueue(llmtest.Reply{Text: "The nightly build is red because the cache key changed.", Step: step,
		Delay: discord.TypingDelay + 300*time.Millisecond})

	threadID := w.mentionBot("why is the nightly build red?")
	require.Eventually(t, func() bool { return len(w.discord.Sent(threadID)) == 1 }, 30*time.Second, 10*time.Millisecond,
		"the first words were never posted")
	require.Equal(t, "The", w.discord.Sent(threadID)[0].Content)
	require.Positive(t, w.discord.Typing(threadID), "typing shown until the first words")
	for range 3 {
		step <- struct{}{}
	}
	require.Eventually(t, func() bool { return len(w.discord.Edits(threadID)) >= 1 }, 30*time.Second, 10*time.Millisecond,
		"the message was never edited as the answer grew")
	close(step)

	got := w.sent(t, threadID, 1)
	th, err := w.store.ThreadByDiscordThread(ctx, threadID)
	require.NoError(t, err)
	w.settled(t, th.ID)
	require.Len(t, w.discord.Sent(threadID), 1, "one message")
	require.Equal(t, recordedAnswer(t, w.store, th), got[0].Content)
	require.Equal(t, "The nightly build is red because the cache key changed.", got[0].Content)
	for _, e := range w.discord.Edits(threadID) {
		require.Empty(t, e.AllowedMentions.Parse, "edits ping nobody")
	}

	// A long answer: 2,500 characters in five deltas.
	long := strings.Repeat("word ", 500)
	w.llm.Enqueue(llmtest.Reply{Text: long, Chunk: 500})
	w.discord.PostUserMessage(threadID, w.ada, "and in detail?")
	require.Eventually(t, func() bool {
		return len(w.discord.Sent(threadID)) == 3 && discordStreamsDelivered(t, w.store)
	}, 30*time.Second, 10*time.Millisecond, "the long answer never finished in two more messages")
	w.settled(t, th.ID)
	sent := w.discord.Sent(threadID)
	require.Equal(t, discord.Parts(strings.TrimSpace(long)), []string{sent[1].Content, sent[2].Content})
}

// TestDiscordStreamKilledMidStreamFinishesSameMessage kills `weft serve`
// with SIGKILL while an answer streams into Discord. The replica that
// resumes writes the answer into the same message, found by its record,
// and its delivery edits it: one message with the recorded answer.
func TestDiscordStreamKilledMidStreamFinishesSameMessage(t *testing.T) {
	t.Parallel()
	fake := discordtest.NewServer(t)
	guild := "100000000000000001"
	channel := fake.AddChannel(guild)
	model := llmtest.NewServer(t)
	step := make(chan struct{})
	var restarted atomic.Bool
	model.SetDefault(func(llmtest.Request) llmtest.Reply {
		if !restarted.Load() {
			return llmtest.Reply{Text: "A first attempt that never ends because the process dies", Step: step}
		}
		return llmtest.Reply{Text: "The whole answer, written again after the crash."}
	})
	weftEnv := map[string]string{
		"DATABASE_URL": dbtest.URL(t), "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": model.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"DISCORD_BOT_TOKEN": discordtest.Token, "DISCORD_API_URL": fake.URL(), "DISCORD_APPLICATION_ID": fake.ApplicationID(),
		"DISCORD_ALLOWED_GUILDS": guild,
	}
	first := startWeft(t, weftEnv)
	ctx := servetest.Waiting(t)
	_, err := fake.WaitIdentifies(ctx, 1)
	require.NoError(t, err, "the gateway never connected")

	threadID := fake.PostUserMessage(channel, discordtest.User{ID: "200000000000000001", Name: "ada"},
		"<@"+fake.BotUser().ID+"> tell me everything").ID
	require.Eventually(t, func() bool { return len(fake.Sent(threadID)) == 1 }, time.Minute, 10*time.Millisecond,
		"the first words were never posted")
	step <- struct{}{}
	step <- struct{}{}
	require.Eventually(t, func() bool { return len(fake.Edits(threadID)) >= 1 }, time.Minute, 10*time.Millisecond,
		"the message never grew")
	first.kill(t)
	restarted.Store(true)
	startWeft(t, weftEnv)

	want := "The whole answer, written again after the crash."
	require.Eventually(t, func() bool {
		sent := fake.Sent(threadID)
		return len(sent) == 1 && sent[0].Content == want
	}, 2*time.Minute, 20*time.Millisecond, "the streamed message was never finished: %+v", fake.Sent(threadID))
	// Settled: the delivery is done and nothing else was posted.
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: weftEnv["DATABASE_URL"]}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool { return discordStreamsDelivered(t, store) }, time.Minute, 20*time.Millisecond)
	require.Len(t, fake.Sent(threadID), 1, "one message")
}
