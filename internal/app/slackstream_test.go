package app

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// recordedAnswer is the content of the thread's last llm_call stitch.
func recordedAnswer(t *testing.T, store *db.Store, th *thread.Thread) string {
	t.Helper()
	all, err := store.Stitches(context.Background(), th.ID, db.StitchPage{Limit: db.MaxStitchPage})
	require.NoError(t, err)
	answer := ""
	for _, s := range all {
		if s.Type == thread.StitchLLMCall {
			answer = s.Content
		}
	}
	require.NotEmpty(t, answer, "no answer recorded")
	return answer
}

// inThread is the bot's messages in a Slack thread, the parent aside.
func inThread(fake *slacktest.Server, channel, threadTS string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range fake.BotMessages(channel) {
		if m.ThreadTS == threadTS && m.TS != threadTS {
			out = append(out, m)
		}
	}
	return out
}

// TestSlackStreamsAnswer: a mention answered by a model that streams
// shows at the fake as chat.startStream (to the person who asked), then
// chat.appendStream while the model writes, then chat.stopStream with the
// rest and the row's metadata: one message whose text is the recorded
// answer, nothing posted with chat.postMessage.
func TestSlackStreamsAnswer(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	step := make(chan struct{})
	w.llm.Enqueue(llmtest.Reply{Text: "The cache layer is deployed to staging and the dashboards are green.", Step: step})

	q := w.mention("is the cache deployed?")
	ctx := servetest.Waiting(t)
	starts, err := w.slack.WaitCalls(ctx, "chat.startStream", 1)
	require.NoError(t, err, "the answer never started streaming")
	require.Equal(t, "The", starts[0].Form.Get("markdown_text"), "the first word shows at once")
	require.Equal(t, w.ada.ID, starts[0].Form.Get("recipient_user_id"))
	require.Equal(t, slacktest.TeamID, starts[0].Form.Get("recipient_team_id"))
	require.Equal(t, q.TS, starts[0].Form.Get("thread_ts"))
	for range 3 {
		step <- struct{}{}
	}
	_, err = w.slack.WaitCalls(ctx, "chat.appendStream", 1)
	require.NoError(t, err, "the words that followed were never appended")
	close(step)

	got := w.answers(t, q.TS, 1)
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)
	require.Len(t, inThread(w.slack, w.channel, q.TS), 1, "one message")
	require.Equal(t, recordedAnswer(t, w.store, th), got[0].Text)
	require.Equal(t, "The cache layer is deployed to staging and the dashboards are green.", got[0].Text)
	require.Equal(t, slacktestOutbox, got[0].Metadata.EventType)
	require.Len(t, w.slack.Calls("chat.stopStream"), 1)
	require.Empty(t, w.slack.Calls("chat.postMessage"))
	require.Empty(t, w.slack.Calls("chat.update"), "the stream ended with the rest of the text")
	require.LessOrEqual(t, len(w.slack.Calls("chat.appendStream"))+2, 12, "requests per answer")
}

const slacktestOutbox = "weft_outbox"

// TestSlackStreamFallsBack: where Slack refuses to stream, the answer is
// posted and updated instead, and the channel is not asked to stream
// again.
func TestSlackStreamFallsBack(t *testing.T) {
	t.Parallel()
	w := newSlackWorldSetup(t, false, func(fake *slacktest.Server) map[string]string {
		fake.RefuseStreaming("C0GENERAL", "channel_type_not_supported")
		return nil
	})
	ctx := servetest.Waiting(t)
	for i, question := range []string{"first?", "second?"} {
		// Held after its first words, so that the answer streams (a model
		// done at once is delivered before anything is streamed).
		step := make(chan struct{})
		w.llm.Enqueue(llmtest.Reply{Text: "Answer to: " + question, Step: step})
		q := w.mention(question)
		_, err := w.slack.WaitCalls(ctx, "chat.postMessage", i+1)
		require.NoError(t, err, "answer %d: the first words were never posted", i)
		close(step)
		got := w.answers(t, q.TS, 1)
		th := w.thread(t, q.TS)
		w.settled(t, th.ID)
		msgs := inThread(w.slack, w.channel, q.TS)
		require.Len(t, msgs, 1, "one message")
		require.Equal(t, "Answer to: "+question, got[0].Text)
		require.Equal(t, recordedAnswer(t, w.store, th), msgs[0].Text)
		require.Len(t, w.slack.Calls("chat.startStream"), 1, "answer %d: the refusal is remembered", i)
		require.Len(t, w.slack.Calls("chat.postMessage"), i+1, "the answer's first words, posted")
		require.NotEmpty(t, w.slack.Calls("chat.update"), "then updated")
	}
}

// TestSlackStreamKilledMidStreamFinishesSameMessage kills `weft serve`
// with SIGKILL while an answer streams into Slack. The replica that
// resumes makes the model call again and writes it into the same
// message, which the delivery finishes: one message at the fake, with the
// recorded answer.
func TestSlackStreamKilledMidStreamFinishesSameMessage(t *testing.T) {
	t.Parallel()
	fake := slacktest.NewServer(t)
	channel := "C0GENERAL"
	fake.AddChannel(channel, "channel")
	model := llmtest.NewServer(t)
	step := make(chan struct{})
	var restarted atomic.Bool
	model.SetDefault(func(llmtest.Request) llmtest.Reply {
		if !restarted.Load() {
			return llmtest.Reply{Text: "A first attempt that never ends because the process dies", Step: step}
		}
		return llmtest.Reply{Text: "The whole answer, written again after the crash."}
	})
	addr := servetest.Addr(t)
	weftEnv := map[string]string{
		"DATABASE_URL": dbtest.URL(t), "WEFT_ADDR": addr, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": model.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "SLACK_API_URL": fake.APIURL(),
	}
	first := startWeft(t, weftEnv)
	servetest.WaitReady(t, "http://"+addr)
	fake.DeliverTo("http://" + addr + "/webhooks/slack")

	q := fake.Post(slacktest.User{ID: "U0ADA", Name: "ada"}, channel, "", "<@"+slacktest.BotUserID+"> tell me everything")
	ctx := servetest.Waiting(t)
	_, err := fake.WaitCalls(ctx, "chat.startStream", 1)
	require.NoError(t, err)
	step <- struct{}{}
	step <- struct{}{}
	_, err = fake.WaitCalls(ctx, "chat.appendStream", 1)
	require.NoError(t, err, "the stream never grew")
	first.kill(t)
	restarted.Store(true)
	startWeft(t, weftEnv)

	var msgs []slacktest.Message
	require.Eventually(t, func() bool {
		msgs = inThread(fake, channel, q.TS)
		return len(msgs) == 1 && msgs[0].Metadata != nil && !msgs[0].Streaming
	}, 2*time.Minute, 20*time.Millisecond, "the streamed message was never finished: %+v", inThread(fake, channel, q.TS))
	require.Equal(t, "The whole answer, written again after the crash.", msgs[0].Text)
	require.Len(t, fake.Calls("chat.startStream"), 1, "no second stream")
	require.Empty(t, fake.Calls("chat.postMessage"), "no second message")
	require.NotEmpty(t, fake.Calls("chat.update"), "the resumed call replaced the cut attempt's text")
}

// TestSlackStreamLongAnswerContinues: an answer past Slack's 3,900
// characters streams its first part into the message, and its delivery
// continues the rest in a second message.
func TestSlackStreamLongAnswerContinues(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	para := strings.Repeat("word ", 700) // 3,500 characters
	// Held after its first chunk until it streams: a model done at once
	// is delivered before anything is streamed.
	step := make(chan struct{})
	w.llm.Enqueue(llmtest.Reply{Text: para + "\n\n" + para, Chunk: 700, Step: step})
	q := w.mention("tell me at length")
	_, err := w.slack.WaitCalls(servetest.Waiting(t), "chat.startStream", 1)
	require.NoError(t, err, "the answer never started streaming")
	close(step)
	got := w.answers(t, q.TS, 2)
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)
	msgs := inThread(w.slack, w.channel, q.TS)
	require.Len(t, msgs, 2, "the streamed message and one more")
	require.Equal(t, strings.TrimSpace(para), got[0].Text)
	require.Equal(t, strings.TrimSpace(para), got[1].Text)
	require.Len(t, w.slack.Calls("chat.startStream"), 1)
	require.Len(t, w.slack.Calls("chat.postMessage"), 1, "the second part, posted on delivery")
}
