package app

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// slackWorld is `weft serve` running in-process with Slack on, against
// slacktest and a fake LLM: events signed and retried as Slack does, over
// HTTP or Socket Mode, and the real slack-go client posting to the fake.
type slackWorld struct {
	base    string
	url     string
	store   *db.Store
	llm     *llmtest.Server
	slack   *slacktest.Server
	channel string
	ada     slacktest.User
}

func newSlackWorld(t *testing.T, socket bool) *slackWorld {
	t.Helper()
	return newSlackWorldEnv(t, socket, nil)
}

// newSlackWorldEnv is newSlackWorld with more environment.
func newSlackWorldEnv(t *testing.T, socket bool, extra map[string]string) *slackWorld {
	t.Helper()
	return newSlackWorldSetup(t, socket, func(*slacktest.Server) map[string]string { return extra })
}

// newSlackWorldSetup is newSlackWorld with the fake set up, and more
// environment given, by setup before weft starts.
func newSlackWorldSetup(t *testing.T, socket bool, setup func(*slacktest.Server) map[string]string) *slackWorld {
	t.Helper()
	fake := slacktest.NewServer(t)
	w := &slackWorld{llm: llmtest.NewServer(t), slack: fake, channel: "C0GENERAL", ada: slacktest.User{ID: "U0ADA", Name: "ada"}}
	fake.AddChannel(w.channel, "channel")
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content}
	})
	w.url = dbtest.URL(t)
	addr := servetest.Addr(t)
	vars := map[string]string{
		"DATABASE_URL": w.url, "WEFT_ADDR": addr, "WEFT_LOG_LEVEL": "warn",
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.llm.OpenAIBaseURL(),
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "SLACK_API_URL": fake.APIURL(),
	}
	if socket {
		fake.EnableSocketMode()
		vars["SLACK_APP_TOKEN"] = slacktest.AppToken
	}
	maps.Copy(vars, setup(fake))
	w.base = servetest.Serve(t, addr, func(ctx context.Context) error { return runServe(ctx, env(vars), &bytes.Buffer{}) })
	if socket {
		_, err := fake.WaitCalls(servetest.Waiting(t), "apps.connections.open", 1)
		require.NoError(t, err, "socket mode never connected")
	} else {
		fake.DeliverTo(w.base + "/webhooks/slack")
	}
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: w.url}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	w.store = store
	return w
}

// mention posts a top-level message mentioning weft.
func (w *slackWorld) mention(text string) slacktest.Message {
	return w.slack.Post(w.ada, w.channel, "", "<@"+slacktest.BotUserID+"> "+text)
}

// answers waits until weft posted at least n messages in the thread, each
// finished: an outbox row's (with its weft_outbox metadata, which a
// streamed answer gets when it is delivered), or the thread's parent.
func (w *slackWorld) answers(t *testing.T, threadTS string, n int) []slacktest.Message {
	t.Helper()
	var got []slacktest.Message
	require.Eventually(t, func() bool {
		got = nil
		for _, m := range w.slack.BotMessages(w.channel) {
			if m.ThreadTS == threadTS && (m.TS == threadTS || m.Metadata != nil && !m.Streaming) {
				got = append(got, m)
			}
		}
		return len(got) >= n
	}, 30*time.Second, 10*time.Millisecond, "weft never posted %d messages in the thread", n)
	return got
}

// thread is the weft thread attached to a Slack thread.
func (w *slackWorld) thread(t *testing.T, threadTS string) *thread.Thread {
	t.Helper()
	th, err := w.store.ThreadBySlackThread(context.Background(), slacktest.TeamID, w.channel, threadTS)
	require.NoError(t, err)
	return th
}

// settled waits until no turn runs on the thread and every post is out.
func (w *slackWorld) settled(t *testing.T, id uuid.UUID) {
	t.Helper()
	waitSettled(t, w.store, id)
}

// inputs are the thread's slack messages (initial prompt included).
func (w *slackWorld) inputs(t *testing.T, id uuid.UUID) []thread.Stitch {
	return w.stitches(t, id, func(s thread.Stitch) bool { return s.Source == thread.PlatformSlack })
}

// stitches are the thread's stitches that keep takes.
func (w *slackWorld) stitches(t *testing.T, id uuid.UUID, keep func(thread.Stitch) bool) []thread.Stitch {
	t.Helper()
	all, err := w.store.Stitches(context.Background(), id, db.StitchPage{Limit: db.MaxStitchPage})
	require.NoError(t, err)
	var out []thread.Stitch
	for _, s := range all {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// overHTTPAndSocket runs f as two parallel subtests: Slack's traffic over
// its HTTP doors, then over Socket Mode.
func overHTTPAndSocket(t *testing.T, f func(t *testing.T, socket bool)) {
	for _, socket := range []bool{false, true} {
		name := "http"
		if socket {
			name = "socket mode"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, socket)
		})
	}
}

// acked waits until every delivery so far ended acknowledged.
func (w *slackWorld) acked(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		acked := 0
		for _, d := range w.slack.Deliveries() {
			if d.Acked {
				acked++
			}
		}
		return acked >= n
	}, 30*time.Second, 10*time.Millisecond, "fewer than %d deliveries acknowledged: %+v", n, w.slack.Deliveries())
}

// TestSlackConversation: a mention opens a thread answered in the Slack
// thread (once, though Slack delivers it twice); a follow-up's prompt holds
// the history; an edit and a delete change the stored thread without a turn.
func TestSlackConversation(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	ctx := context.Background()

	q := w.mention("what is 2 & 2?")
	got := w.answers(t, q.TS, 1)
	require.Equal(t, "Answer to: what is 2 &amp; 2?", got[0].Text, "escaped mrkdwn")
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)
	att, err := w.store.SlackAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SlackAttachment{ThreadID: th.ID, TeamID: slacktest.TeamID, ChannelID: w.channel, ThreadTS: q.TS,
		ChannelType: "channel", CreatedBy: w.ada.ID, Active: true, CreatedAt: att.CreatedAt, UpdatedAt: att.UpdatedAt}, *att)
	w.acked(t, 3) // app_mention, message, and weft's own post's message
	var hasSlack bool
	var slackTS string
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT has_slack, slack_thread_ts FROM cross_platform_threads WHERE thread_id = $1", th.ID).Scan(&hasSlack, &slackTS))
	require.True(t, hasSlack)
	require.Equal(t, q.TS, slackTS)
	var active int
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM active_slack_threads WHERE thread_id = $1 AND channel_id = $2", th.ID, w.channel).Scan(&active))
	require.Equal(t, 1, active)
	require.Contains(t, w.slack.Statuses(), slacktest.Status{Channel: w.channel, ThreadTS: q.TS, Status: "is thinking…",
		LoadingMessages: slackapi.LoadingMessages})

	f := w.slack.Post(w.ada, w.channel, q.TS, "and 3 + 3?")
	got = w.answers(t, q.TS, 2)
	require.Equal(t, "Answer to: ada: and 3 + 3?", got[1].Text)
	w.settled(t, th.ID)
	reqs := w.llm.Requests()
	last := reqs[len(reqs)-1]
	var history []string
	for _, m := range last.Messages {
		history = append(history, m.Content)
	}
	require.Equal(t, []string{"what is 2 & 2?", "Answer to: what is 2 & 2?", "ada: and 3 + 3?"}, history)

	in := w.inputs(t, th.ID)
	require.Len(t, in, 2, "one stitch per message: the mention's two deliveries stored it once")
	require.Equal(t, thread.StitchInitialPrompt, in[0].Type)
	require.Equal(t, thread.StitchSlackMessage, in[1].Type)
	require.Equal(t, thread.SlackMessageID(slacktest.TeamID, w.channel, f.TS), in[1].ExternalID)

	calls := w.llm.Calls()
	_, ok := w.slack.Edit(w.channel, f.TS, "and 4 + 4?")
	require.True(t, ok)
	require.Eventually(t, func() bool {
		s, err := w.store.StitchByExternalID(ctx, thread.PlatformSlack, in[1].ExternalID)
		require.NoError(t, err)
		return s.Content == "and 4 + 4?" && !s.EditedAt.IsZero()
	}, 30*time.Second, 10*time.Millisecond, "the edit never reached the stitch")
	_, ok = w.slack.Delete(w.channel, f.TS)
	require.True(t, ok)
	require.Eventually(t, func() bool {
		s, err := w.store.StitchByExternalID(ctx, thread.PlatformSlack, in[1].ExternalID)
		require.NoError(t, err)
		return !s.DeletedAt.IsZero()
	}, 30*time.Second, 10*time.Millisecond, "the delete never reached the stitch")
	w.acked(t, 7)
	require.Equal(t, calls, w.llm.Calls(), "an edit or a delete starts no turn")
	require.Len(t, w.slack.BotMessages(w.channel), 2)
}

// TestSlackRedeliveryStoresOnce: an Events API retry and a Socket Mode
// redelivery of events already handled add no stitch and no answer.
func TestSlackRedeliveryStoresOnce(t *testing.T) {
	t.Parallel()
	overHTTPAndSocket(t, func(t *testing.T, socket bool) {
		w := newSlackWorld(t, socket)
		q := w.mention("hello")
		w.answers(t, q.TS, 1)
		th := w.thread(t, q.TS)
		w.settled(t, th.ID)
		w.acked(t, 3)
		first := w.slack.Deliveries()
		for _, d := range first {
			w.slack.Redeliver(d.EventID)
		}
		// Each redelivered as a retry and acknowledged; a delivery that
		// came after the snapshot (not a retry) is not counted.
		require.Eventually(t, func() bool {
			retried := map[string]bool{}
			for _, d := range w.slack.Deliveries() {
				if d.Attempt == 1 && d.Acked {
					retried[d.EventID] = true
				}
			}
			for _, d := range first {
				if !retried[d.EventID] {
					return false
				}
			}
			return true
		}, 30*time.Second, 10*time.Millisecond, "a retry of each delivery acknowledged: %+v", w.slack.Deliveries())
		w.settled(t, th.ID)
		require.Len(t, w.inputs(t, th.ID), 1)
		require.Len(t, w.slack.BotMessages(w.channel), 1)
		require.Equal(t, 1, w.llm.Calls())
	})
}

// TestSlackDoorRejects: forged, stale, malformed, incomplete and oversized
// requests get 4xx and write nothing; a url_verification gets its
// challenge; an unknown event type is acknowledged and recorded once, its
// retry too.
func TestSlackDoorRejects(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	ctx := context.Background()
	_, good := w.slack.Envelope(map[string]any{"type": "reaction_added", "user": "U0ADA", "reaction": "eyes"})
	now := time.Now()
	post := func(path string, body []byte, h http.Header) int {
		req, err := http.NewRequest(http.MethodPost, w.base+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	big := bytes.Repeat([]byte("x"), 2<<20)
	tests := []struct {
		name   string
		path   string
		body   []byte
		header http.Header
		status int
	}{
		{"forged", "/webhooks/slack", good, slacktest.SignWith("not-the-secret", good, now), http.StatusUnauthorized},
		{"unsigned", "/webhooks/slack", good, http.Header{"Content-Type": {"application/json"}}, http.StatusUnauthorized},
		{"stale", "/webhooks/slack", good, slacktest.Sign(good, now.Add(-6*time.Minute)), http.StatusUnauthorized},
		{"early", "/webhooks/slack", good, slacktest.Sign(good, now.Add(6*time.Minute)), http.StatusUnauthorized},
		{"body changed", "/webhooks/slack", append(bytes.Clone(good), ' '), slacktest.Sign(good, now), http.StatusUnauthorized},
		{"truncated", "/webhooks/slack", good[:len(good)/2], slacktest.Sign(good[:len(good)/2], now), http.StatusBadRequest},
		{"not json", "/webhooks/slack", []byte("hello"), slacktest.Sign([]byte("hello"), now), http.StatusBadRequest},
		{"no event id", "/webhooks/slack", []byte(`{"type":"event_callback","team_id":"T1","event":{"type":"message"}}`),
			slacktest.Sign([]byte(`{"type":"event_callback","team_id":"T1","event":{"type":"message"}}`), now), http.StatusBadRequest},
		{"oversized", "/webhooks/slack", big, slacktest.Sign(big, now), http.StatusRequestEntityTooLarge},
		{"forged command", "/webhooks/slack/commands", []byte("command=%2Fweft&text=continue+ENG-1&team_id=T&channel_id=C&user_id=U"),
			slacktest.SignWith("nope", []byte("command=%2Fweft&text=continue+ENG-1&team_id=T&channel_id=C&user_id=U"), now), http.StatusUnauthorized},
		{"incomplete command", "/webhooks/slack/commands", []byte("command=%2Fweft"), slacktest.Sign([]byte("command=%2Fweft"), now), http.StatusBadRequest},
		{"stale command", "/webhooks/slack/commands", []byte("command=%2Fweft&text=continue+ENG-1&team_id=T&channel_id=C&user_id=U"),
			slacktest.Sign([]byte("command=%2Fweft&text=continue+ENG-1&team_id=T&channel_id=C&user_id=U"), now.Add(-6*time.Minute)), http.StatusUnauthorized},
		{"malformed command", "/webhooks/slack/commands", []byte("command=%2Fweft&text=%zz"), slacktest.Sign([]byte("command=%2Fweft&text=%zz"), now), http.StatusBadRequest},
	}
	for _, tt := range tests {
		require.Equal(t, tt.status, post(tt.path, tt.body, tt.header), tt.name)
	}
	var n int
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&n))
	require.Zero(t, n, "a refused request writes nothing")
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM threads").Scan(&n))
	require.Zero(t, n)

	challenge := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	req, _ := http.NewRequest(http.MethodPost, w.base+"/webhooks/slack", bytes.NewReader(challenge))
	req.Header = slacktest.Sign(challenge, now)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`, buf.String())

	require.Equal(t, http.StatusOK, post("/webhooks/slack", good, slacktest.Sign(good, now)), "an unknown event type is acknowledged")
	retry := slacktest.Sign(good, now)
	retry.Set("X-Slack-Retry-Num", "1")
	require.Equal(t, http.StatusOK, post("/webhooks/slack", good, retry))
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries WHERE platform = 'slack'").Scan(&n))
	require.Equal(t, 1, n, "recorded once")

	cmd := []byte("command=%2Fweft&text=help&team_id=T1&channel_id=C1&user_id=U1")
	req, _ = http.NewRequest(http.MethodPost, w.base+"/webhooks/slack/commands", bytes.NewReader(cmd))
	req.Header = slacktest.Sign(cmd, now)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	buf.Reset()
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.Contains(buf.String(), `"response_type":"ephemeral"`) && strings.Contains(buf.String(), "Usage"), buf.String())
}

// TestSlackCrashBeforePostPostsOnce kills `weft serve` with SIGKILL after
// the answer's row committed and Slack took the post, before weft heard
// back. chat.postMessage has no idempotency key: the new process finds
// the post by its outbox id in the thread, and Slack shows it once.
func TestSlackCrashBeforePostPostsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "Here is the answer."} })
	sl := slacktest.NewServer(t)
	sl.AddChannel("C0CRASH", "channel")
	// The first post is made, and its answer hangs until the process dies.
	sl.Fail("chat.postMessage", 1, fakekit.Slow(time.Hour).AfterApplying())
	addr := servetest.Addr(t)
	weftEnv := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": addr, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "SLACK_API_URL": sl.APIURL(),
		// The post path under test: a streamed answer starts its message
		// with chat.startStream, not chat.postMessage (its own crash test is
		// TestSlackStreamKilledMidStreamFinishesSameMessage).
		"WEFT_STREAM_SLACK": "off",
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)
	servetest.WaitReady(t, "http://"+addr)
	sl.DeliverTo("http://" + addr + "/webhooks/slack")

	q := sl.Post(slacktest.User{ID: "U0ADA"}, "C0CRASH", "", "<@"+slacktest.BotUserID+"> what is the answer?")
	var id uuid.UUID
	require.Eventually(t, func() bool {
		th, err := store.ThreadBySlackThread(ctx, slacktest.TeamID, "C0CRASH", q.TS)
		if err != nil {
			return false
		}
		id = th.ID
		rows, err := store.ThreadOutbox(ctx, th.ID)
		require.NoError(t, err)
		return len(rows) == 1 && rows[0].Status == thread.OutboxSending && len(sl.BotMessages("C0CRASH")) == 1
	}, time.Minute, 20*time.Millisecond, "the post never started")
	first.kill(t)
	startWeft(t, weftEnv)

	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, id)
		require.NoError(t, err)
		return rows[0].Status == thread.OutboxSent
	}, 2*time.Minute, 50*time.Millisecond, "the post was never completed")
	got := sl.BotMessages("C0CRASH")
	require.Len(t, got, 1, "exactly one message in Slack")
	require.Equal(t, "Here is the answer.", got[0].Text)
	require.Equal(t, q.TS, got[0].ThreadTS)
	rows, err := store.ThreadOutbox(ctx, id)
	require.NoError(t, err)
	require.Equal(t, got[0].TS, rows[0].ExternalID)
	require.Equal(t, 1, fake.Calls(), "the recorded answer was not asked for again")
}

// TestSlackAllowedTeams: with SLACK_ALLOWED_TEAMS set, an event or a
// command from a workspace not in it is acknowledged, over HTTP and Socket
// Mode, and writes nothing; one in it is answered.
func TestSlackAllowedTeams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		socket  bool
		allowed string
	}{
		{"HTTPRefused", false, "T0OTHER"},
		{"SocketRefused", true, "T0OTHER, T0THIRD"},
		{"HTTPAllowed", false, "T0OTHER," + slacktest.TeamID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSlackWorldEnv(t, tc.socket, map[string]string{"SLACK_ALLOWED_TEAMS": tc.allowed})
			refused := !strings.Contains(tc.allowed, slacktest.TeamID)
			q := w.mention("are you there?")
			if !refused {
				w.answers(t, q.TS, 1)
				return
			}
			w.acked(t, 2) // the app_mention and the message
			for _, d := range w.slack.Deliveries() {
				require.True(t, d.Acked, "acknowledged, so that Slack does not retry")
				if !tc.socket {
					require.Equal(t, http.StatusOK, d.Status)
				}
			}
			status, reply := w.command(t, slacktest.TeamID, "continue ENG-1")
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "weft is not enabled in this workspace.", reply)
			for _, table := range []string{"webhook_deliveries", "threads", "slack_thread_metadata", "river_job"} {
				require.Zero(t, w.count(t, "SELECT count(*) FROM "+table), table)
			}
			require.Empty(t, w.slack.BotMessages(w.channel))
		})
	}
}
