package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/logtest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
)

// toolsWorld is a fake Discord guild with the real client on it, a fake
// model behind the real OpenAI adapter, and a fresh database.
type toolsWorld struct {
	t                *testing.T
	fake             *discordtest.Server
	client           *discord.Client
	llm              *llmtest.Server
	fast             llm.Provider
	store            *db.Store
	guild, channel   string
	alice, bob, dave discordtest.User
}

func newToolsWorld(t *testing.T) *toolsWorld {
	t.Helper()
	fake := discordtest.NewServer(t)
	client, err := discord.New(discord.Config{Token: discordtest.Token, APIBaseURL: fake.URL(), Logger: logtest.New(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	model := llmtest.NewServer(t)
	// No retries: a scripted 500 is the model failing, at once.
	fast, err := llm.New(llm.Config{Provider: "openai", APIKey: "test", BaseURL: model.OpenAIBaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	guild := "400000000000000001"
	return &toolsWorld{t: t, fake: fake, client: client, llm: model, fast: fast, store: dbtest.NewStore(t),
		guild: guild, channel: fake.AddChannel(guild),
		alice: discordtest.User{ID: "500000000000000001", Name: "alice"},
		bob:   discordtest.User{ID: "500000000000000002", Name: "bob"},
		dave:  discordtest.User{ID: "500000000000000003", Name: "dave"},
	}
}

// post posts a top-level message; with replies, people answer it in a
// thread started on it, as Discord users do.
func (w *toolsWorld) post(author discordtest.User, text string, replies ...string) *postedMessage {
	w.t.Helper()
	m := w.fake.PostUserMessage(w.channel, author, text)
	if len(replies) > 0 {
		_, err := w.client.StartThread(context.Background(), w.channel, m.ID, "thread")
		require.NoError(w.t, err)
		for i, r := range replies {
			w.fake.PostUserMessage(m.ID, []discordtest.User{w.bob, w.dave}[i%2], r)
		}
	}
	return &postedMessage{ID: m.ID, At: m.Timestamp}
}

type postedMessage struct {
	ID string
	At time.Time
}

// mention is what weft's Discord sink does with "@weft <prompt>" in the
// channel: a thread on the mention, and a weft thread whose initial prompt
// is the mention.
func (w *toolsWorld) mention(prompt string) *thread.Thread {
	w.t.Helper()
	ctx := context.Background()
	m := w.fake.PostUserMessage(w.channel, w.alice, "<@"+w.fake.BotUser().ID+"> "+prompt)
	id, err := w.client.StartThread(ctx, w.channel, m.ID, prompt)
	require.NoError(w.t, err)
	th, err := thread.NewBuilder(nil).WithGoal(prompt).
		InteractiveDiscord(&thread.DiscordAttachment{DiscordThreadID: id, ChannelID: w.channel, GuildID: w.guild, CreatedBy: w.alice.ID, ThreadName: prompt}).
		WithInitialPrompt(thread.Stitch{Content: prompt, Source: thread.PlatformDiscord, ExternalID: m.ID,
			Author: &thread.Author{ID: w.alice.ID, Name: w.alice.Name}}).
		Build(ctx, w.store)
	require.NoError(w.t, err)
	return th
}

func (w *toolsWorld) chain(id uuid.UUID) []thread.Stitch {
	w.t.Helper()
	chain, err := w.store.Stitches(context.Background(), id, db.StitchPage{})
	require.NoError(w.t, err)
	return chain
}

// reads counts the fake's message-list requests for a channel or thread.
func (w *toolsWorld) reads(channelID string) int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Method == "GET" && r.Path == "/channels/"+channelID+"/messages" {
			n++
		}
	}
	return n
}

// busyChannel is a channel with two threads about cold starts on
// team_abc123 among chatter, one of it a thread of its own.
type busyChannel struct {
	coldStarts, runtime, pizza *postedMessage
}

func (w *toolsWorld) busyChannel() busyChannel {
	w.t.Helper()
	var b busyChannel
	for i := range 8 {
		w.post(w.bob, fmt.Sprintf("standup notes %d: nothing blocking", i))
	}
	b.pizza = w.post(w.dave, "who wants pizza on friday?", "pineapple please", "margherita for me")
	b.coldStarts = w.post(w.alice, "cold starts on team_abc123 are up to 9s since Tuesday",
		"confirmed, the warm pool is empty for team_abc123", "rolled back the pool config")
	for i := range 8 {
		w.post(w.dave, fmt.Sprintf("reminder %d: fill in the survey", i))
	}
	b.runtime = w.post(w.bob, "heads up: the runtime upgrade slows cold starts", "ticket RUN-42 tracks it")
	w.post(w.alice, "lunch at noon?")
	return b
}

// tsRE is a message's timestamp in a relevant thread's heading.
var tsRE = regexp.MustCompile(` \(ts [0-9]{10}\.[0-9]{6}\)`)

// withoutTS is a discovery section without its threads' timestamps (a
// Discord message's time, made unique), which threadBlock leaves out.
func withoutTS(t *testing.T, sec string) string {
	t.Helper()
	require.Equal(t, strings.Count(sec, "Thread from "), len(tsRE.FindAllString(sec, -1)), "each thread has its ts")
	return tsRE.ReplaceAllString(sec, "")
}

// threadBlock is how a relevant thread reads in the prompt, without its ts.
func threadBlock(root *postedMessage, author, text, why string, replies ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Thread from %s: %s: %s\n  Why relevant: %s\n", root.At.UTC().Format("2006-01-02 15:04 UTC"), author, text, why)
	for _, r := range replies {
		b.WriteString("  Reply: " + r + "\n")
	}
	return b.String()
}

func TestDiscoveryBringsRelevantThreadsIntoThePrompt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newToolsWorld(t)
	b := w.busyChannel()
	th := w.mention("is team_abc123 affected by the cold starts?")

	w.llm.Enqueue(
		llmtest.Reply{Text: fmt.Sprintf(`[{"id": %q, "reason": "team_abc123 cold starts", "score": 0.95},
			{"id": %s, "reason": "runtime upgrade slows cold starts", "score": 0.7},
			{"id": %q, "reason": "food", "score": 0.2},
			{"id": "123456789012345678", "reason": "made up", "score": 0.99}]`, b.coldStarts.ID, b.runtime.ID, b.pizza.ID)},
		llmtest.Reply{Text: "Yes: team_abc123 has 9 s cold starts since Tuesday."},
	)
	discovery := discordDiscovery(t, w.client, w.store, w.fast)
	runner := &agent.Runner{LLM: w.fast, Model: "main-model", Context: []agent.ContextProvider{discovery}, Logger: logtest.New(t)}
	chain, err := w.store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	require.NoError(t, runner.Turn(ctx, th, chainStore{w.store}, chain))

	reqs := w.llm.Requests()
	require.Len(t, reqs, 2)
	rank, main := reqs[0], reqs[1]
	require.Equal(t, "fast-model", rank.Model)
	require.Contains(t, rank.Last().Content, `"is team_abc123 affected by the cold starts?"`)
	require.Regexp(t, `\n\[[0-9]{10}\.[0-9]{6}\] dave: who wants pizza on friday\?\n`, rank.Last().Content, "messages are named by their time, as a ts")
	require.Contains(t, rank.Last().Content, "score >= 0.6")

	require.Equal(t, "main-model", main.Model)
	require.Contains(t, main.System, "<discord_channel_context>\nFound 2 relevant threads about team_abc123 cold starts, runtime upgrade slows cold starts (ranked by the fast model).\n\n"+
		"Recent messages in this channel, oldest first:\n")
	require.Contains(t, withoutTS(t, main.System), "Relevant threads, most relevant first:\n"+
		threadBlock(b.coldStarts, "alice", "cold starts on team_abc123 are up to 9s since Tuesday", "team_abc123 cold starts",
			"bob: confirmed, the warm pool is empty for team_abc123", "dave: rolled back the pool config")+
		threadBlock(b.runtime, "bob", "heads up: the runtime upgrade slows cold starts", "runtime upgrade slows cold starts",
			"bob: ticket RUN-42 tracks it")+"</discord_channel_context>")
	require.Equal(t, 2, strings.Count(main.System, "Thread from "), "only the relevant threads")
	require.NotContains(t, main.System, "pineapple", "an irrelevant thread's replies stay out")
	require.Equal(t, "lunch at noon?", lastOverviewLine(main.System), "the overview ends with the newest message before the mention")

	att, err := w.store.DiscordAttachment(ctx, th.ID)
	require.NoError(t, err)
	sent := w.fake.Sent(att.DiscordThreadID)
	require.Len(t, sent, 1, "the person sees weft searching, once")
	require.Contains(t, sent[0].Content, "Searching this channel's recent threads")
}

// lastOverviewLine is the overview's newest message text.
func lastOverviewLine(system string) string {
	overview, _, _ := strings.Cut(system, "\n\nRelevant threads")
	lines := strings.Split(overview, "\n")
	_, text, _ := strings.Cut(lines[len(lines)-1], ": ")
	return text
}

// chainStore is agent.Store on the database, without outbox or status:
// enough to run a turn and see what reached the model.
type chainStore struct{ store *db.Store }

func (c chainStore) Record(ctx context.Context, id uuid.UUID, _ []thread.Stitch, e thread.Effects, _ bool) ([]thread.Stitch, error) {
	for _, s := range e.Stitches {
		s.ThreadID = id
		if _, err := c.store.AppendStitch(ctx, s); err != nil {
			return nil, err
		}
	}
	return c.store.Stitches(ctx, id, db.StitchPage{})
}

func TestDiscoveryFallsBackToKeywords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"ModelFails", llmtest.Reply{Status: 500}},
		{"InvalidJSON", llmtest.Reply{Text: "The relevant messages are the ones about cold starts."}},
		{"BrokenJSONInAFence", llmtest.Reply{Text: "```json\n[{\"id\": \"1\", \"score\": \n```"}},
		{"MalformedBody", llmtest.Reply{Malformed: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newToolsWorld(t)
			b := w.busyChannel()
			th := w.mention("is team_abc123 affected by the cold starts?")
			w.llm.Enqueue(tc.reply)
			discovery := discordDiscovery(t, w.client, w.store, w.fast)

			secs := discovery.PromptSections(ctx, th, w.chain(th.ID))
			require.Len(t, secs, 1)
			require.Equal(t, 1, w.llm.Calls())
			require.Contains(t, secs[0], "Found 2 relevant threads about team_abc123, cold, starts (ranked by keyword match).")
			require.Contains(t, withoutTS(t, secs[0]), "Relevant threads, most relevant first:\n"+
				threadBlock(b.coldStarts, "alice", "cold starts on team_abc123 are up to 9s since Tuesday", "mentions team_abc123, cold, starts",
					"bob: confirmed, the warm pool is empty for team_abc123", "dave: rolled back the pool config")+
				threadBlock(b.runtime, "bob", "heads up: the runtime upgrade slows cold starts", "mentions cold, starts",
					"bob: ticket RUN-42 tracks it"))
			require.Equal(t, 2, strings.Count(secs[0], "Thread from "))
		})
	}
}

func TestDiscoveryCaches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newToolsWorld(t)
	b := w.busyChannel()
	ranking := fmt.Sprintf(`[{"id": %q, "reason": "cold starts", "score": 0.9}]`, b.coldStarts.ID)
	w.llm.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: ranking} })

	var mu sync.Mutex
	now := time.Now()
	clock := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	provider := discordDiscovery(t, w.client, w.store, w.fast)
	discovery := provider.(*discovery.Discovery)
	discovery.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	ask := func(th *thread.Thread) string {
		t.Helper()
		secs := discovery.PromptSections(ctx, th, w.chain(th.ID))
		require.Len(t, secs, 1)
		return secs[0]
	}
	first := w.mention("how bad are the cold starts?")
	sec := ask(first)
	require.Contains(t, sec, "Reply: dave: rolled back the pool config")
	require.Equal(t, [3]int{1, 1, 1}, [3]int{w.reads(w.channel), w.reads(b.coldStarts.ID), w.llm.Calls()})

	require.Equal(t, sec, ask(first), "each model call of the turn")
	require.Equal(t, [3]int{1, 1, 1}, [3]int{w.reads(w.channel), w.reads(b.coldStarts.ID), w.llm.Calls()}, "the mention's result is reused")

	second := w.mention("cold starts again?")
	ask(second)
	require.Equal(t, [3]int{1, 1, 2}, [3]int{w.reads(w.channel), w.reads(b.coldStarts.ID), w.llm.Calls()},
		"a new mention is ranked anew, on the cached channel and thread")

	clock(6 * time.Minute)
	ask(w.mention("and now?"))
	require.Equal(t, [3]int{2, 1, 3}, [3]int{w.reads(w.channel), w.reads(b.coldStarts.ID), w.llm.Calls()},
		"channel history lives 5 minutes, threads 10")

	clock(5 * time.Minute)
	ask(w.mention("still?"))
	require.Equal(t, [3]int{3, 2, 4}, [3]int{w.reads(w.channel), w.reads(b.coldStarts.ID), w.llm.Calls()})
}

func TestDiscoverySkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// thread makes the conversation in a busy channel; nil chatter
		// leaves the channel empty.
		thread  func(w *toolsWorld) *thread.Thread
		chatter bool
	}{
		{"MessageInAThread", func(w *toolsWorld) *thread.Thread {
			th := w.mention("cold starts?")
			att, err := w.store.DiscordAttachment(ctx, th.ID)
			require.NoError(t, err)
			m := w.fake.PostUserMessage(att.DiscordThreadID, w.bob, "what about the cold starts in here?")
			_, err = w.store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: m.Content,
				Source: thread.PlatformDiscord, ExternalID: m.ID, Author: &thread.Author{ID: w.bob.ID, Name: w.bob.Name}})
			require.NoError(t, err)
			return th
		}, true},
		{"ContinuedFromElsewhere", func(w *toolsWorld) *thread.Thread {
			att := dbtest.DiscordAttachment()
			att.ChannelID, att.GuildID = w.channel, w.guild
			th, err := thread.NewBuilder(nil).WithGoal("cold starts?").InteractiveDiscord(att).
				WithInitialPrompt(thread.Stitch{Content: "cold starts?", Source: thread.PlatformAPI}).Build(ctx, w.store)
			require.NoError(t, err)
			return th
		}, true},
		{"NothingBeforeTheMention", func(w *toolsWorld) *thread.Thread { return w.mention("cold starts?") }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newToolsWorld(t)
			if tc.chatter {
				w.busyChannel()
			}
			th := tc.thread(w)
			discovery := discordDiscovery(t, w.client, w.store, w.fast)
			before := len(w.fake.Requests())

			require.Empty(t, discovery.PromptSections(ctx, th, w.chain(th.ID)))
			require.Zero(t, w.llm.Calls(), "nothing ranked")
			if tc.chatter {
				require.Equal(t, before, len(w.fake.Requests()), "nothing read from Discord")
			}
			att, err := w.store.DiscordAttachment(ctx, th.ID)
			require.NoError(t, err)
			require.Empty(t, w.fake.Sent(att.DiscordThreadID), "no searching notice")
		})
	}
}

func TestLoadDiscoveryConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    discovery.Config
		wantErr string
	}{
		{"Defaults", nil, discovery.Config{MaxThreads: 10, ScoreThreshold: 0.6, FetchTimeout: 5 * time.Second, RankTimeout: 2 * time.Second}, ""},
		{"Set", map[string]string{"MAX_RELEVANT_THREADS": "3", "RELEVANCE_SCORE_THRESHOLD": "0.75", "THREAD_FETCH_TIMEOUT_MS": "1500", "RELEVANCE_TIMEOUT_MS": "800"},
			discovery.Config{MaxThreads: 3, ScoreThreshold: 0.75, FetchTimeout: 1500 * time.Millisecond, RankTimeout: 800 * time.Millisecond}, ""},
		{"BadRankTimeout", map[string]string{"RELEVANCE_TIMEOUT_MS": "0"}, discovery.Config{}, "RELEVANCE_TIMEOUT_MS"},
		{"BadCount", map[string]string{"MAX_RELEVANT_THREADS": "ten"}, discovery.Config{}, "MAX_RELEVANT_THREADS"},
		{"BadTimeout", map[string]string{"THREAD_FETCH_TIMEOUT_MS": "-1"}, discovery.Config{}, "THREAD_FETCH_TIMEOUT_MS"},
		{"ThresholdAboveOne", map[string]string{"RELEVANCE_SCORE_THRESHOLD": "6"}, discovery.Config{}, "RELEVANCE_SCORE_THRESHOLD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := loadDiscoveryConfig(env(tc.env))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// discordDiscovery is discovery over Discord alone, as serve builds it.
func discordDiscovery(t *testing.T, c *discord.Client, store *db.Store, fast llm.Provider) agent.ContextProvider {
	src := surfacediscord.NewDiscovery(c, store, logtest.New(t))
	return newDiscovery(map[thread.Platform]discovery.Source{thread.PlatformDiscord: src}, fastModelOf(fast, "fast-model"), discovery.Config{}, logtest.New(t))
}

// With WEFT_FAST_LLM_*, the fast model is asked at its own provider and
// the agent's is not.
func TestFastModelAtItsOwnProvider(t *testing.T) {
	t.Parallel()
	agentModel, fastModel := llmtest.NewServer(t), llmtest.NewServer(t)
	agent, err := llm.New(llm.Config{Provider: "openai", APIKey: "a", BaseURL: agentModel.OpenAIBaseURL()})
	require.NoError(t, err)
	fastModel.Enqueue(llmtest.Reply{Text: "[]"})
	p, err := fastProvider(&Config{Fast: FastProvider{Provider: "openai", APIKey: "f", BaseURL: fastModel.OpenAIBaseURL()}}, agent)
	require.NoError(t, err)
	got, err := fastModelOf(p, "small").Ask(context.Background(), "system", "rank these")
	require.NoError(t, err)
	require.Equal(t, "[]", got)
	require.Equal(t, 1, fastModel.Calls())
	require.Equal(t, "small", fastModel.Requests()[0].Model)
	require.Zero(t, agentModel.Calls())

	same, err := fastProvider(&Config{}, agent)
	require.NoError(t, err)
	require.Same(t, agent, same, "without WEFT_FAST_LLM_* the agent's provider serves it")
}
