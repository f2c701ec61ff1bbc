package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
)

// slackToolsWorld is a fake Slack workspace with weft's real client on it,
// a fake model behind the real OpenAI adapter, and a fresh database.
type slackToolsWorld struct {
	t                *testing.T
	fake             *slacktest.Server
	app              *surfaceslack.App
	llm              *llmtest.Server
	fast             llm.Provider
	store            *db.Store
	channel          string
	alice, bob, dave slacktest.User
	log              *logtest.Buffer
	logger           *slog.Logger
}

func newSlackToolsWorld(t *testing.T) *slackToolsWorld {
	t.Helper()
	fake := slacktest.NewServer(t)
	logger, buf := logtest.Recording(t)
	a, err := surfaceslack.New(surfaceslack.Config{BotToken: slacktest.BotToken, APIURL: fake.APIURL()}, nil, nil, logger)
	require.NoError(t, err)
	model := llmtest.NewServer(t)
	// No retries: a scripted 500 is the model failing, at once.
	fast, err := llm.New(llm.Config{Provider: "openai", APIKey: "test", BaseURL: model.OpenAIBaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	w := &slackToolsWorld{t: t, fake: fake, app: a, llm: model, fast: fast, store: dbtest.NewStore(t), channel: "C0ENG", log: buf, logger: logger.With("component", "slack"),
		alice: slacktest.User{ID: "U0ALICE", Name: "alice"},
		bob:   slacktest.User{ID: "U0BOB", Name: "bob"},
		dave:  slacktest.User{ID: "U0DAVE", Name: "dave"},
	}
	fake.AddChannel(w.channel, "channel")
	return w
}

// discovery is discovery over this Slack alone, as serve builds it; cfg
// tunes it and the source's clock is now.
func (w *slackToolsWorld) discovery(cfg discovery.Config, now func() time.Time) agent.ContextProvider {
	src := w.app.Discovery(w.store)
	src.Now = now
	return newDiscovery(map[thread.Platform]discovery.Source{thread.PlatformSlack: src}, fastModelOf(w.fast, "fast-model"), cfg, w.logger)
}

// post posts a top-level message and, with replies, people's answers in
// its thread.
func (w *slackToolsWorld) post(author slacktest.User, text string, replies ...string) slacktest.Message {
	m := w.fake.Post(author, w.channel, "", text)
	for i, r := range replies {
		w.fake.Post([]slacktest.User{w.bob, w.dave}[i%2], w.channel, m.TS, r)
	}
	return m
}

// mention is what weft's Slack ingest does with "@weft <prompt>" at the
// top of a channel: a weft thread on the mention's own ts, whose initial
// prompt is the mention. threadTS, when set, makes it a mention inside that
// thread instead; team, when set, a mention in another workspace.
func (w *slackToolsWorld) mention(prompt, threadTS, team, typ string) *thread.Thread {
	w.t.Helper()
	m := w.fake.Post(w.alice, w.channel, threadTS, "<@"+slacktest.BotUserID+"> "+prompt)
	if threadTS == "" {
		threadTS = m.TS
	}
	if team == "" {
		team = slacktest.TeamID
	}
	th, err := thread.NewBuilder(nil).WithGoal(prompt).
		InteractiveSlack(&thread.SlackAttachment{TeamID: team, ChannelID: w.channel, ThreadTS: threadTS, ChannelType: typ, CreatedBy: w.alice.ID}).
		WithInitialPrompt(thread.Stitch{Content: prompt, Source: thread.PlatformSlack, ExternalID: thread.SlackMessageID(team, w.channel, m.TS),
			Author: &thread.Author{ID: w.alice.ID, Name: w.alice.Name}}).
		Build(context.Background(), w.store)
	require.NoError(w.t, err)
	return th
}

func (w *slackToolsWorld) chain(id uuid.UUID) []thread.Stitch {
	w.t.Helper()
	chain, err := w.store.Stitches(context.Background(), id, db.StitchPage{})
	require.NoError(w.t, err)
	return chain
}

// busy is a channel with two threads about cold starts on team_abc123
// among chatter, one of it a thread of its own.
type busySlack struct{ coldStarts, runtime, pizza, lunch slacktest.Message }

func (w *slackToolsWorld) busyChannel() busySlack {
	var b busySlack
	for i := range 5 {
		w.post(w.bob, fmt.Sprintf("standup notes %d: nothing blocking", i))
	}
	b.pizza = w.post(w.dave, "who wants pizza on friday?", "pineapple please", "margherita for me")
	b.coldStarts = w.post(w.alice, "cold starts on team_abc123 are up to 9s since Tuesday",
		"confirmed, the warm pool is empty for team_abc123", "rolled back the pool config")
	b.runtime = w.post(w.bob, "heads up: the runtime upgrade slows cold starts", "ticket RUN-42 tracks it")
	w.fake.Post(slacktest.User{ID: slacktest.BotUserID, Name: "weft"}, w.channel, "", "cold starts look fine (the bot's own earlier answer)")
	b.lunch = w.post(w.alice, "lunch at noon?")
	return b
}

// slackThreadBlock is how a relevant thread reads in the prompt.
func slackThreadBlock(root slacktest.Message, why string, replies ...string) string {
	var b strings.Builder
	// The fake's people are called as their ids say: U0BOB is bob.
	name := strings.ToLower(strings.TrimPrefix(root.User, "U0"))
	fmt.Fprintf(&b, "Thread from %s (ts %s): %s: %s\n  Why relevant: %s\n", slack.ParseTS(root.TS).UTC().Format("2006-01-02 15:04 UTC"), root.TS, name, root.Text, why)
	for _, r := range replies {
		b.WriteString("  Reply: " + r + "\n")
	}
	return b.String()
}

func TestSlackDiscoveryRanksByModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSlackToolsWorld(t)
	b := w.busyChannel()
	th := w.mention("is team_abc123 affected by the cold starts?", "", "", "channel")
	w.llm.Enqueue(
		llmtest.Reply{Text: fmt.Sprintf(`[{"ts": %q, "reason": "team_abc123 cold starts", "score": 0.95},
			{"ts": %s, "reason": "runtime upgrade slows cold starts", "score": 0.7},
			{"ts": %q, "reason": "food", "score": 0.2},
			{"ts": %q, "reason": "a meeting", "score": 0.65},
			{"ts": "1234567890.123456", "reason": "made up", "score": 0.99}]`, b.coldStarts.TS, b.runtime.TS, b.pizza.TS, b.lunch.TS)},
		llmtest.Reply{Text: "Yes: team_abc123 has 9 s cold starts since Tuesday."},
	)
	discovery := w.discovery(discovery.Config{}, nil)
	runner := &agent.Runner{LLM: w.fast, Model: "main-model", Context: []agent.ContextProvider{discovery}, Logger: logtest.New(t)}
	require.NoError(t, runner.Turn(ctx, th, chainStore{w.store}, w.chain(th.ID)))

	reqs := w.llm.Requests()
	require.Len(t, reqs, 2)
	rank, main := reqs[0], reqs[1]
	require.Equal(t, "fast-model", rank.Model)
	require.Contains(t, rank.System, "Analyze which messages are relevant to this request")
	require.Contains(t, rank.Last().Content, "You are analyzing a Slack channel")
	require.Contains(t, rank.Last().Content, "["+b.pizza.TS+"] dave: who wants pizza on friday?", "messages are named by their ts")
	require.NotContains(t, rank.Last().Content, "the bot's own earlier answer", "weft's own top-level posts are not ranked")
	require.NotContains(t, rank.Last().Content, "pineapple", "replies are not ranked, only top-level messages")

	require.Equal(t, "main-model", main.Model)
	require.Contains(t, main.System, "<slack_channel_context>\nFound 3 relevant threads about team_abc123 cold starts, runtime upgrade slows cold starts, a meeting (ranked by the fast model).\n\n"+
		"Recent messages in this channel, oldest first:\n")
	require.Contains(t, main.System, "Relevant threads, most relevant first:\n"+
		slackThreadBlock(b.coldStarts, "team_abc123 cold starts", "bob: confirmed, the warm pool is empty for team_abc123", "dave: rolled back the pool config")+
		slackThreadBlock(b.runtime, "runtime upgrade slows cold starts", "bob: ticket RUN-42 tracks it")+
		slackThreadBlock(b.lunch, "a meeting")+"</slack_channel_context>")
	require.NotContains(t, main.System, "pineapple", "an irrelevant thread's replies stay out")
	require.Equal(t, "lunch at noon?", lastOverviewLine(main.System), "the overview ends with the newest message before the mention")

	require.Len(t, w.fake.Calls("conversations.history"), 1)
	require.Len(t, w.fake.Calls("conversations.replies"), 2, "only the relevant threads with replies are read")
	statuses := w.fake.Statuses()
	require.Len(t, statuses, 1, "the person sees weft searching, once")
	require.Equal(t, "is searching this channel's threads…", statuses[0].Status)
}

func TestSlackDiscoveryFallsBackToKeywords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"ModelFails", llmtest.Reply{Status: 500}},
		{"NotJSON", llmtest.Reply{Text: "The relevant messages are the ones about cold starts."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSlackToolsWorld(t)
			b := w.busyChannel()
			th := w.mention("is team_abc123 affected by the cold starts?", "", "", "channel")
			w.llm.Enqueue(tc.reply)
			secs := w.discovery(discovery.Config{}, nil).PromptSections(context.Background(), th, w.chain(th.ID))
			require.Len(t, secs, 1)
			require.Equal(t, 1, w.llm.Calls())
			require.Contains(t, secs[0], "Found 2 relevant threads about team_abc123, cold, starts (ranked by keyword match).")
			require.Contains(t, secs[0], "Relevant threads, most relevant first:\n"+
				slackThreadBlock(b.coldStarts, "mentions team_abc123, cold, starts", "bob: confirmed, the warm pool is empty for team_abc123", "dave: rolled back the pool config")+
				slackThreadBlock(b.runtime, "mentions cold, starts", "bob: ticket RUN-42 tracks it"))
			require.Contains(t, w.log.String(), "relevance ranking by the fast model failed")
		})
	}
}

// rankOnly answers the ranking with the cold starts thread alone.
func rankOnly(w *slackToolsWorld, root slacktest.Message) {
	w.llm.Enqueue(llmtest.Reply{Text: fmt.Sprintf(`[{"ts": %q, "reason": "cold starts", "score": 0.9}]`, root.TS)})
}

func TestSlackDiscoveryThreadFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault fakekit.Fault
		log   string
	}{
		// The timeout is the setting under test, not a wait for sync.
		{"SlowFetch", fakekit.Fault{Code: "internal_error", Delay: time.Minute}, "relevant threads not all read in time"},
		{"Refused", fakekit.ErrorCode("not_in_channel"), "relevant thread not read"},
		{"RateLimited", fakekit.RateLimited(30 * time.Second), "relevant thread not read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSlackToolsWorld(t)
			b := w.busyChannel()
			th := w.mention("cold starts?", "", "", "channel")
			rankOnly(w, b.coldStarts)
			w.fake.Fail("conversations.replies", 0, tc.fault)
			secs := w.discovery(discovery.Config{FetchTimeout: 200 * time.Millisecond}, nil).PromptSections(context.Background(), th, w.chain(th.ID))
			require.Len(t, secs, 1, "the channel and the thread's root still help")
			require.Contains(t, secs[0], "Found 1 relevant thread about cold starts (ranked by the fast model).")
			require.Contains(t, secs[0], "Relevant threads, most relevant first:\n"+
				slackThreadBlock(b.coldStarts, "cold starts")+"</slack_channel_context>")
			require.Contains(t, w.log.String(), tc.log)
		})
	}
}

func TestSlackDiscoveryChannelUnreadable(t *testing.T) {
	t.Parallel()
	w := newSlackToolsWorld(t)
	w.busyChannel()
	th := w.mention("cold starts?", "", "", "channel")
	w.fake.Fail("conversations.history", 1, fakekit.ErrorCode("not_in_channel"))
	require.Empty(t, w.discovery(discovery.Config{}, nil).PromptSections(context.Background(), th, w.chain(th.ID)))
	require.Zero(t, w.llm.Calls(), "nothing ranked")
	require.Empty(t, w.fake.Statuses(), "no notice without a search")
	require.Contains(t, w.log.String(), "relevant thread discovery failed")
}

// A rate limit leaves Slack's history methods alone for as long as Slack
// asked, for every later mention too.
func TestSlackDiscoveryHonoursRateLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSlackToolsWorld(t)
	w.busyChannel()
	now := time.Now()
	discovery := w.discovery(discovery.Config{}, func() time.Time { return now })
	w.fake.Fail("conversations.history", 1, fakekit.RateLimited(30*time.Second))
	th := w.mention("cold starts?", "", "", "channel")
	require.Empty(t, discovery.PromptSections(ctx, th, w.chain(th.ID)))
	th = w.mention("cold starts again?", "", "", "channel")
	require.Empty(t, discovery.PromptSections(ctx, th, w.chain(th.ID)))
	require.Len(t, w.fake.Calls("conversations.history"), 1, "not asked again within Retry-After")

	now = now.Add(31 * time.Second)
	w.llm.Enqueue(llmtest.Reply{Text: "[]"})
	th = w.mention("and now?", "", "", "channel")
	require.Len(t, discovery.PromptSections(ctx, th, w.chain(th.ID)), 1)
	require.Len(t, w.fake.Calls("conversations.history"), 2)
}

// A thread weft took part in is read from Postgres; one it joined mid-way
// from Slack for what came before weft only.
func TestSlackDiscoveryReadsStoredThreadsFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSlackToolsWorld(t)
	// weft was mentioned at the top of this thread: all of it is stored.
	whole := w.mention("cold starts on team_abc123?", "", "", "channel")
	wholeAtt, err := w.store.SlackAttachment(ctx, whole.ID)
	require.NoError(t, err)
	reply := w.fake.Post(w.bob, w.channel, wholeAtt.ThreadTS, "the warm pool is empty")
	_, err = w.store.AppendStitch(ctx, thread.Stitch{ThreadID: whole.ID, Type: thread.StitchSlackMessage, Source: thread.PlatformSlack,
		Content: "the warm pool is empty", ExternalID: thread.SlackMessageID(slacktest.TeamID, w.channel, reply.TS), Author: &thread.Author{ID: w.bob.ID, Name: "bob"}})
	require.NoError(t, err)
	_, err = w.store.AppendStitch(ctx, thread.Stitch{ThreadID: whole.ID, Type: thread.StitchAgentThought, Content: "Refill the warm pool for team_abc123."})
	require.NoError(t, err)
	// weft was asked in the middle of this one: its start is Slack's.
	root := w.post(w.dave, "cold starts on the runtime upgrade", "is it RUN-42?")
	mid := w.mention("cold starts, any news?", root.TS, "", "channel")
	late := w.fake.Post(w.bob, w.channel, root.TS, "RUN-42 is fixed")
	_, err = w.store.AppendStitch(ctx, thread.Stitch{ThreadID: mid.ID, Type: thread.StitchSlackMessage, Source: thread.PlatformSlack,
		Content: "RUN-42 is fixed", ExternalID: thread.SlackMessageID(slacktest.TeamID, w.channel, late.TS), Author: &thread.Author{ID: w.bob.ID, Name: "bob"}})
	require.NoError(t, err)

	th := w.mention("cold starts?", "", "", "channel")
	w.llm.Enqueue(llmtest.Reply{Text: fmt.Sprintf(`[{"ts": %q, "reason": "a", "score": 0.9}, {"ts": %q, "reason": "b", "score": 0.8}]`, wholeAtt.ThreadTS, root.TS)})
	secs := w.discovery(discovery.Config{}, nil).PromptSections(ctx, th, w.chain(th.ID))
	require.Len(t, secs, 1)
	require.Contains(t, secs[0], "  Why relevant: a\n  Reply: bob: the warm pool is empty\n  Reply: "+whole.AgentName+": Refill the warm pool for team_abc123.\n")
	require.Contains(t, secs[0], "  Why relevant: b\n  Reply: bob: is it RUN-42?\n  Reply: alice: cold starts, any news?\n  Reply: bob: RUN-42 is fixed\n")
	calls := w.fake.Calls("conversations.replies")
	require.Len(t, calls, 1, "the thread weft saw whole is not read from Slack")
	require.Equal(t, root.TS, calls[0].Form.Get("ts"))
	require.NotEmpty(t, calls[0].Form.Get("latest"), "only what came before weft")
}

// The ranking sees the 100 top-level messages before the mention, as the
// origin's getChannelHistory(channel, botUserId, 100), not 99 and the
// mention itself.
func TestSlackDiscoveryScansTheLatest100(t *testing.T) {
	t.Parallel()
	w := newSlackToolsWorld(t)
	for i := range 120 {
		w.post(w.bob, fmt.Sprintf("note %d", i))
	}
	th := w.mention("notes?", "", "", "channel")
	w.llm.Enqueue(llmtest.Reply{Text: "[]"})
	require.Len(t, w.discovery(discovery.Config{}, nil).PromptSections(context.Background(), th, w.chain(th.ID)), 1)
	reqs := w.llm.Requests()
	require.Len(t, reqs, 1)
	prompt := reqs[0].Last().Content
	require.Equal(t, 100, strings.Count(prompt, "] bob: note "))
	require.Contains(t, prompt, "] bob: note 20\n")
	require.NotContains(t, prompt, "] bob: note 19\n")
}

func TestSlackDiscoverySkipped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		thread func(w *slackToolsWorld) *thread.Thread
	}{
		{"InAThread", func(w *slackToolsWorld) *thread.Thread {
			root := w.post(w.dave, "cold starts again")
			return w.mention("cold starts?", root.TS, "", "channel")
		}},
		{"DirectMessage", func(w *slackToolsWorld) *thread.Thread { return w.mention("cold starts?", "", "", "im") }},
		// Each workspace is read with its own token: a mention in one weft
		// has none for reads nothing, this workspace's channels least.
		{"OtherWorkspace", func(w *slackToolsWorld) *thread.Thread { return w.mention("cold starts?", "", "T0OTHER", "channel") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSlackToolsWorld(t)
			w.busyChannel()
			th := tc.thread(w)
			require.Empty(t, w.discovery(discovery.Config{}, nil).PromptSections(context.Background(), th, w.chain(th.ID)))
			require.Zero(t, w.llm.Calls(), "nothing ranked")
			require.Empty(t, w.fake.Calls("conversations.history"), "nothing read from Slack")
		})
	}
}

// Through weft serve: a mention at the top of a channel reaches the model
// with the channel's relevant thread, which weft was never in.
func TestSlackMentionDiscoversThroughServe(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	root := w.slack.Post(w.ada, w.channel, "", "deploys of billing-api fail since noon")
	w.slack.Post(slacktest.User{ID: "U0BOB", Name: "bob"}, w.channel, root.TS, "the migration lock is held")
	w.slack.Post(w.ada, w.channel, "", "lunch at noon?")
	m := w.mention("why do billing-api deploys fail?")
	w.answers(t, m.TS, 1)

	var ranked, answered bool
	for _, r := range w.llm.Requests() {
		ranked = ranked || strings.Contains(r.System, "Analyze which messages are relevant to this request")
		if strings.Contains(r.System, "<slack_channel_context>") {
			answered = true
			require.Contains(t, r.System, "  Reply: bob: the migration lock is held\n")
			require.NotContains(t, r.System, "): ada: lunch", "chatter is no relevant thread")
		}
	}
	require.True(t, ranked, "the fast model was asked to rank the channel")
	require.True(t, answered, "the answer's prompt holds the channel's context")
}
