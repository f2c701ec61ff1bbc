package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
)

// channel is a Source over messages held in memory: ids are numbers as
// strings, ordered as posted; a thread is keyed by its root's id.
type channel struct {
	mu      sync.Mutex
	top     []discovery.ChannelMessage
	threads map[string][]discovery.ChannelMessage
	bot     string
	asked   []int // the n of each TopLevel call
}

func (c *channel) Platform() string { return "Test" }

func (c *channel) Channel(_ context.Context, th *thread.Thread, m *thread.Stitch) (*discovery.Channel, error) {
	return &discovery.Channel{Key: "test", ID: "C1", ThreadID: th.ID, MentionID: m.ExternalID, BotUserID: c.bot}, nil
}

func (c *channel) Before(a, b string) bool {
	var x, y int
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return x < y
}

func (c *channel) TopLevel(_ context.Context, ch *discovery.Channel, n int) ([]discovery.ChannelMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, n)
	var before []discovery.ChannelMessage
	for _, m := range c.top {
		if c.Before(m.ID, ch.MentionID) {
			before = append(before, m)
		}
	}
	return before[max(0, len(before)-n):], nil
}

func (c *channel) Thread(_ context.Context, _ *discovery.Channel, root discovery.ChannelMessage, n int) ([]discovery.ChannelMessage, error) {
	msgs := c.threads[root.ID]
	return msgs[max(0, len(msgs)-n):], nil
}

func (c *channel) Notify(context.Context, *discovery.Channel) {}

// base is the first message's time; each message is a minute later.
var base = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func msg(i int, author, text string) discovery.ChannelMessage {
	return discovery.ChannelMessage{ID: fmt.Sprint(i), AuthorID: "U" + author, Author: author, Text: text, At: base.Add(time.Duration(i) * time.Minute)}
}

// ts is message i's timestamp as the ranking names it.
func ts(i int) string { return fmt.Sprintf("%d.000000", base.Add(time.Duration(i)*time.Minute).Unix()) }

// fast is a fast model that records its prompts and answers with answer.
type fast struct {
	mu      sync.Mutex
	prompts []string
	answer  func(ctx context.Context, prompt string) (string, error)
}

func (f *fast) Ask(ctx context.Context, _, prompt string) (string, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	f.mu.Unlock()
	return f.answer(ctx, prompt)
}

func mention(id int, text string) []thread.Stitch {
	return []thread.Stitch{{Type: thread.StitchInitialPrompt, Source: "test", ExternalID: fmt.Sprint(id), Content: text, Seq: 1}}
}

func newDiscovery(t *testing.T, src discovery.Source, f discovery.FastModel, cfg discovery.Config) *discovery.Discovery {
	return &discovery.Discovery{Sources: map[thread.Platform]discovery.Source{"test": src}, Fast: f, Config: cfg, Logger: logtest.New(t)}
}

// coldStarts is a channel with two threads about cold starts among
// chatter, and the bot's own earlier answer at the top level.
func coldStarts() *channel {
	return &channel{bot: "Uweft",
		top: []discovery.ChannelMessage{
			msg(1, "dave", "who wants pizza?"),
			msg(2, "alice", "cold starts on team_abc123 are up to 9s"),
			msg(3, "weft", "cold starts are fine everywhere (an earlier answer of the bot)"),
			msg(4, "bob", "the runtime upgrade slows cold starts"),
			msg(5, "alice", "lunch?"),
		},
		threads: map[string][]discovery.ChannelMessage{
			"2": {msg(2, "alice", "cold starts on team_abc123 are up to 9s"), msg(6, "bob", "the warm pool is empty")},
			"4": {msg(4, "bob", "the runtime upgrade slows cold starts"), msg(7, "dave", "RUN-42 tracks it")},
		},
	}
}

func TestFindRelevantThreadsIsTheOriginsObject(t *testing.T) {
	t.Parallel()
	src := coldStarts()
	f := &fast{answer: func(context.Context, string) (string, error) {
		return fmt.Sprintf(`[{"ts": %q, "reason": "Mentions team_abc123", "score": 0.9}, {"ts": %q, "reason": "Discusses cold start performance", "score": 0.8}]`, ts(2), ts(4)), nil
	}}
	d := newDiscovery(t, src, f, discovery.Config{})
	ch := &discovery.Channel{Key: "test", ID: "C1", MentionID: "9"}
	res, err := d.FindRelevantThreads(context.Background(), discovery.Config{MaxThreads: 10, ScoreThreshold: 0.6, FetchTimeout: time.Second, RankTimeout: time.Second},
		src, ch, "is team_abc123 affected?", src.top)
	require.NoError(t, err)
	got, err := json.Marshal(res)
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"relevantThreads": [
		{"rootMessage": "alice: cold starts on team_abc123 are up to 9s", "threadMessages": ["bob: the warm pool is empty"], "timestamp": %q, "relevanceReason": "Mentions team_abc123"},
		{"rootMessage": "bob: the runtime upgrade slows cold starts", "threadMessages": ["dave: RUN-42 tracks it"], "timestamp": %q, "relevanceReason": "Discusses cold start performance"}],
		"summary": "Found 2 relevant threads about mentions team_abc123, discusses cold start performance (ranked by the fast model)."}`, ts(2), ts(4)), string(got))

	sec := discovery.Render("Test", src.top, res)
	require.True(t, strings.HasPrefix(sec, "<test_channel_context>\nFound 2 relevant threads about mentions team_abc123, discusses cold start performance (ranked by the fast model).\n\n"), sec)
	require.Contains(t, sec, "Relevant threads, most relevant first:\n"+
		"Thread from 2026-03-01 09:02 UTC (ts "+ts(2)+"): alice: cold starts on team_abc123 are up to 9s\n  Why relevant: Mentions team_abc123\n  Reply: bob: the warm pool is empty\n"+
		"Thread from 2026-03-01 09:04 UTC (ts "+ts(4)+"): bob: the runtime upgrade slows cold starts\n  Why relevant: Discusses cold start performance\n  Reply: dave: RUN-42 tracks it\n</test_channel_context>")
}

func TestDiscoveryRanksByTimestamps(t *testing.T) {
	t.Parallel()
	src := coldStarts()
	f := &fast{answer: func(context.Context, string) (string, error) {
		return fmt.Sprintf(`[{"ts": %q, "reason": "team_abc123", "score": 0.9}]`, ts(2)), nil
	}}
	secs := newDiscovery(t, src, f, discovery.Config{}).PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(9, "is team_abc123 affected?"))
	require.Len(t, secs, 1)
	require.Len(t, f.prompts, 1)
	prompt := f.prompts[0]
	require.Contains(t, prompt, "Return a JSON array of relevant message timestamps with reasoning:\n[\n  { \"ts\": \"1234567890.123\"")
	require.Contains(t, prompt, "["+ts(1)+"] dave: who wants pizza?\n["+ts(2)+"] alice: cold starts on team_abc123 are up to 9s\n")
	require.Contains(t, secs[0], "Found 1 relevant thread about team_abc123 (ranked by the fast model).")
	require.Contains(t, secs[0], "Thread from 2026-03-01 09:02 UTC (ts "+ts(2)+"): alice: cold starts on team_abc123 are up to 9s\n")
}

func TestDiscoveryLeavesOutTheBotsOwnPosts(t *testing.T) {
	t.Parallel()
	src := coldStarts()
	f := &fast{answer: func(context.Context, string) (string, error) { return `[]`, nil }}
	secs := newDiscovery(t, src, f, discovery.Config{}).PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(9, "cold starts?"))
	require.Len(t, secs, 1)
	require.NotContains(t, f.prompts[0], "an earlier answer of the bot", "the bot's own post is not ranked")
	require.NotContains(t, secs[0], "an earlier answer of the bot", "nor shown")
	require.Contains(t, secs[0], "Found no relevant threads in this channel.")

	// Keyword matching would pick it first, as the one with most words.
	secs = newDiscovery(t, coldStarts(), nil, discovery.Config{}).PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(9, "cold starts fine everywhere?"))
	require.Len(t, secs, 1)
	require.NotContains(t, secs[0], "an earlier answer of the bot")
}

func TestDiscoveryScansTheLatest100(t *testing.T) {
	t.Parallel()
	src := &channel{threads: map[string][]discovery.ChannelMessage{}}
	for i := 1; i <= 130; i++ {
		src.top = append(src.top, msg(i, "bob", fmt.Sprintf("note %d", i)))
	}
	f := &fast{answer: func(context.Context, string) (string, error) { return `[]`, nil }}
	secs := newDiscovery(t, src, f, discovery.Config{}).PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(131, "notes?"))
	require.Len(t, secs, 1)
	require.Equal(t, []int{100}, src.asked)
	require.Equal(t, 100, strings.Count(f.prompts[0], "] bob: note "))
	require.Contains(t, f.prompts[0], "] bob: note 31\n")
	require.NotContains(t, f.prompts[0], "] bob: note 30\n")
}

func TestDiscoveryRankingTimeoutMeansNoDiscovery(t *testing.T) {
	t.Parallel()
	f := &fast{answer: func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done() // a model that does not answer in time
		return "", ctx.Err()
	}}
	d := newDiscovery(t, coldStarts(), f, discovery.Config{RankTimeout: 20 * time.Millisecond})
	secs := d.PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(9, "is team_abc123 affected by cold starts?"))
	require.Empty(t, secs, "no keyword ranking after a timeout: no discovery at all")
	require.Len(t, f.prompts, 1)
}

func TestDiscoveryDisambiguatesEqualTimestamps(t *testing.T) {
	t.Parallel()
	src := &channel{threads: map[string][]discovery.ChannelMessage{}}
	for i := 1; i <= 3; i++ {
		m := msg(i, "bob", fmt.Sprintf("deploy %d failed", i))
		m.At = base // three messages of one millisecond
		src.top = append(src.top, m)
	}
	second := fmt.Sprintf("%d.000001", base.Unix())
	f := &fast{answer: func(context.Context, string) (string, error) {
		return fmt.Sprintf(`[{"ts": %q, "reason": "deploy", "score": 0.9}]`, second), nil
	}}
	secs := newDiscovery(t, src, f, discovery.Config{}).PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mention(9, "deploys?"))
	require.Len(t, secs, 1)
	require.Contains(t, f.prompts[0], "["+second+"] bob: deploy 2 failed\n")
	require.Contains(t, secs[0], "(ts "+second+"): bob: deploy 2 failed\n")
}
