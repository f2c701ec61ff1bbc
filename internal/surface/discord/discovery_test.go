package discord_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
)

// memDiscord is an in-memory Discord for what the fake server cannot do
// on demand, such as a read that hangs.
type memDiscord struct {
	mu       sync.Mutex
	channels map[string]discord.DiscordChannel
	msgs     map[string][]discovery.ChannelMessage // oldest first
	hang     map[string]bool                       // reads wait for their context
	slow     time.Duration                         // every read takes this long
	reads    map[string]int
	before   map[string]string // the last read's beforeID, by channel
}

func (m *memDiscord) Channel(_ context.Context, id string) (discord.DiscordChannel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.channels[id]
	if !ok {
		return ch, fmt.Errorf("channel %s: %w", id, thread.ErrNotFound)
	}
	return ch, nil
}

func (m *memDiscord) MessagesBefore(ctx context.Context, id, before string, limit int) ([]discovery.ChannelMessage, error) {
	m.mu.Lock()
	m.reads[id]++
	m.before[id] = before
	hang, msgs, ok := m.hang[id], m.msgs[id], m.msgs[id] != nil
	m.mu.Unlock()
	time.Sleep(m.slow)
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if !ok {
		return nil, fmt.Errorf("messages %s: %w", id, thread.ErrNotFound)
	}
	return msgs[max(0, len(msgs)-limit):], nil
}

func (m *memDiscord) MessagesAfter(context.Context, string, string, int) ([]discovery.ChannelMessage, error) {
	return nil, errors.New("not used")
}

func (m *memDiscord) Message(context.Context, string, string) (discovery.ChannelMessage, error) {
	return discovery.ChannelMessage{}, errors.New("not used")
}

func (m *memDiscord) SearchMembers(context.Context, string, string, int) ([]discord.DiscordMember, error) {
	return nil, errors.New("not used")
}

// fastFunc is a FastModel.
type fastFunc func(system, prompt string) (string, error)

func (f fastFunc) Ask(_ context.Context, system, prompt string) (string, error) {
	return f(system, prompt)
}

const (
	channelID = "110000000000000000"
	mentionID = "110000000000000099"
	rootA     = "110000000000000001"
	rootB     = "110000000000000002"
	chatter   = "110000000000000003"
)

// conversation is a weft thread opened by a mention in channelID.
type conversation struct{}

func (conversation) DiscordAttachment(_ context.Context, id uuid.UUID) (*thread.DiscordAttachment, error) {
	return &thread.DiscordAttachment{ThreadID: id, DiscordThreadID: mentionID, ChannelID: channelID, GuildID: "120000000000000000"}, nil
}

// discordSource is Discovery's sources with Discord's on dc alone.
func discordSource(dc *memDiscord, post func(context.Context, discord.DiscoveryNotice)) map[thread.Platform]discovery.Source {
	return map[thread.Platform]discovery.Source{thread.PlatformDiscord: &discord.DiscordChannels{Reader: dc, Store: conversation{}, Post: post}}
}

func mentionChain() []thread.Stitch {
	return []thread.Stitch{
		{Type: thread.StitchSystemPrompt, Content: "persona", Seq: 1},
		{Type: thread.StitchInitialPrompt, Content: "why are builds slow?", Source: thread.PlatformDiscord, ExternalID: mentionID, Seq: 2},
	}
}

func newMemDiscord() *memDiscord {
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	return &memDiscord{
		channels: map[string]discord.DiscordChannel{},
		msgs: map[string][]discovery.ChannelMessage{
			channelID: {
				{ID: rootA, Author: "alice", Text: "builds are slow on runner-3", At: at},
				{ID: rootB, Author: "bob", Text: "cache misses since the upgrade", At: at},
				{ID: chatter, Author: "dave", Text: "coffee?", At: at},
				{ID: mentionID, Author: "alice", Text: "<@1> why are builds slow?", At: at},
			},
			rootA: {{ID: "110000000000000011", Author: "carol", Text: "runner-3 has a full disk", At: at}},
			rootB: {{ID: "110000000000000012", Author: "carol", Text: "the cache key changed", At: at}},
		},
		hang:   map[string]bool{},
		reads:  map[string]int{},
		before: map[string]string{},
	}
}

func TestDiscoveryPartialResultsOnTimeout(t *testing.T) {
	t.Parallel()
	dc := newMemDiscord()
	dc.hang[rootB] = true
	d := &discovery.Discovery{Sources: discordSource(dc, nil), Logger: logtest.New(t),
		// The timeout is the setting under test, not a wait for sync.
		Config: discovery.Config{FetchTimeout: 50 * time.Millisecond},
		Fast: fastFunc(func(string, string) (string, error) {
			return fmt.Sprintf(`[{"id":%q,"reason":"a","score":0.9},{"id":%q,"reason":"b","score":0.8}]`, rootA, rootB), nil
		})}
	secs := d.PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mentionChain())
	require.Len(t, secs, 1)
	require.Contains(t, secs[0], "Thread from 2025-03-01 09:30 UTC (ts 1740821400.000000): alice: builds are slow on runner-3\n  Why relevant: a\n  Reply: carol: runner-3 has a full disk\n"+
		"Thread from 2025-03-01 09:30 UTC (ts 1740821400.000001): bob: cache misses since the upgrade\n  Why relevant: b\n</discord_channel_context>",
		"the thread read in time has its replies; the other keeps its root")
}

func TestDiscoveryRankingAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer string
		err    error
		max    int
		want   []string // roots of the threads in the prompt, in order
		how    string
	}{
		{"Array", fmt.Sprintf(`[{"id":%q,"reason":"r","score":0.7},{"id":%q,"reason":"r","score":0.9}]`, rootA, rootB), nil, 0,
			[]string{"cache misses since the upgrade", "builds are slow on runner-3"}, "the fast model"},
		{"FencedWithNumericID", "```json\n" + fmt.Sprintf(`[{"id":%s,"reason":"r","score":0.8}]`, rootA) + "\n```", nil, 0,
			[]string{"builds are slow on runner-3"}, "the fast model"},
		{"WrappedInAnObject", fmt.Sprintf(`{"messages":[{"id":%q,"reason":"r","score":0.8}]}`, rootB), nil, 0,
			[]string{"cache misses since the upgrade"}, "the fast model"},
		{"ThresholdUnknownAndRepeatedIDs", fmt.Sprintf(`[{"id":%q,"score":0.59},{"id":%q,"score":0.6},{"id":%q,"score":0.9},{"id":"1","score":1}]`,
			rootA, rootB, rootB), nil, 0, []string{"cache misses since the upgrade"}, "the fast model"},
		{"MaxThreads", fmt.Sprintf(`[{"id":%q,"score":0.7},{"id":%q,"score":0.9}]`, rootA, rootB), nil, 1,
			[]string{"cache misses since the upgrade"}, "the fast model"},
		{"NoneRelevant", `[]`, nil, 0, nil, ""},
		{"ModelFails", "", errors.New("503"), 0, []string{"builds are slow on runner-3"}, "keyword match"},
		{"NotJSON", "Message 1 is relevant.", nil, 0, []string{"builds are slow on runner-3"}, "keyword match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &discovery.Discovery{Sources: discordSource(newMemDiscord(), nil), Logger: logtest.New(t),
				Config: discovery.Config{MaxThreads: tc.max},
				Fast:   fastFunc(func(string, string) (string, error) { return tc.answer, tc.err })}
			secs := d.PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mentionChain())
			require.Len(t, secs, 1)
			var roots []string
			for _, line := range strings.Split(secs[0], "\n") {
				if rest, ok := strings.CutPrefix(line, "Thread from 2025-03-01 09:30 UTC (ts "); ok {
					_, rest, _ = strings.Cut(rest, "): ")
					_, text, _ := strings.Cut(rest, ": ")
					roots = append(roots, text)
				}
			}
			require.Equal(t, tc.want, roots)
			if tc.how == "" {
				require.Contains(t, secs[0], "Found no relevant threads in this channel.")
			} else {
				require.Contains(t, secs[0], "ranked by "+tc.how+")")
			}
		})
	}
}

func TestDiscoveryNotifiesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var notices []discord.DiscoveryNotice
	var ranked atomic.Int32
	d := &discovery.Discovery{Logger: logtest.New(t),
		Sources: discordSource(newMemDiscord(), func(_ context.Context, n discord.DiscoveryNotice) { notices = append(notices, n) }),
		Fast:    fastFunc(func(string, string) (string, error) { ranked.Add(1); return `[]`, nil })}
	th := &thread.Thread{ID: uuid.New()}
	first := d.PromptSections(ctx, th, mentionChain())
	require.Equal(t, first, d.PromptSections(ctx, th, mentionChain()))
	require.Len(t, notices, 1)
	require.Equal(t, discord.DiscoveryNotice{ThreadID: th.ID, DiscordThreadID: mentionID, MentionID: mentionID,
		Text: "🔎 Searching this channel's recent threads for context…"}, notices[0])
	require.EqualValues(t, 1, ranked.Load())
}

func TestDiscoveryChannelUnreadable(t *testing.T) {
	t.Parallel()
	dc := newMemDiscord()
	delete(dc.msgs, channelID)
	dc.hang[channelID] = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the read fails with the turn's context
	d := &discovery.Discovery{Logger: logtest.New(t),
		Sources: discordSource(dc, func(context.Context, discord.DiscoveryNotice) { panic("no notice without a search") }),
		Fast:    fastFunc(func(string, string) (string, error) { panic("no ranking without a channel") })}
	require.Empty(t, d.PromptSections(ctx, &thread.Thread{ID: uuid.New()}, mentionChain()))
}

func TestDiscoveryBurstReadsTheChannelOnce(t *testing.T) {
	t.Parallel()
	dc := newMemDiscord()
	// Reads long enough for the mentions' turns to overlap in them.
	dc.slow = 200 * time.Millisecond
	d := &discovery.Discovery{Sources: discordSource(dc, nil), Logger: logtest.New(t),
		Fast: fastFunc(func(string, string) (string, error) { return fmt.Sprintf(`[{"id":%q,"score":0.9}]`, rootA), nil })}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			chain := mentionChain()
			chain[1].ExternalID = fmt.Sprintf("1100000000000001%02d", i)
			secs := d.PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, chain)
			assert.Len(t, secs, 1)
		})
	}
	wg.Wait()
	require.Equal(t, 1, dc.reads[channelID], "one read of the channel for the burst")
	require.Equal(t, 1, dc.reads[rootA], "one read of the thread all of them picked")
}

func TestDiscoveryReadsBeforeTheMentionWithoutTheBot(t *testing.T) {
	t.Parallel()
	dc := newMemDiscord()
	dc.msgs[channelID] = append(dc.msgs[channelID][:3:3], discovery.ChannelMessage{ID: "110000000000000004", AuthorID: "1", Author: "weft", Bot: true,
		Text: "builds are slow because of the cache (the bot's earlier answer)", At: time.Date(2025, 3, 1, 9, 31, 0, 0, time.UTC)}, dc.msgs[channelID][3])
	var prompt string
	d := &discovery.Discovery{Logger: logtest.New(t),
		Sources: map[thread.Platform]discovery.Source{thread.PlatformDiscord: &discord.DiscordChannels{Reader: dc, Store: conversation{}, Self: func() string { return "1" }}},
		Fast:    fastFunc(func(_, p string) (string, error) { prompt = p; return `[]`, nil })}
	secs := d.PromptSections(context.Background(), &thread.Thread{ID: uuid.New()}, mentionChain())
	require.Len(t, secs, 1)
	require.Equal(t, mentionID, dc.before[channelID], "the channel is read from before the mention: 100 messages, not 99 and the mention")
	require.Contains(t, prompt, "alice: builds are slow on runner-3")
	require.NotContains(t, prompt, "the bot's earlier answer", "weft's own top-level posts are not ranked")
}
