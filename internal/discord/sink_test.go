package discord

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// fakeRecorder tracks conversations in memory, as ingest would.
type fakeRecorder struct {
	mu       sync.Mutex
	tracked  map[string]bool
	stored   map[string]int // message id → times stored
	onStart  func(threadID string)
	convs    int
	inactive []string
	edits    []edit
}

// edit is one DiscordEdited call.
type edit struct {
	id, content string
	at          time.Time
}

func newFakeRecorder() *fakeRecorder {
	return &fakeRecorder{tracked: map[string]bool{}, stored: map[string]int{}}
}

func (f *fakeRecorder) DiscordConversation(_ context.Context, att thread.DiscordAttachment, p thread.Stitch) (bool, error) {
	if f.onStart != nil {
		f.onStart(att.DiscordThreadID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.convs++
	if f.tracked[att.DiscordThreadID] {
		return false, nil
	}
	f.tracked[att.DiscordThreadID] = true
	f.stored[p.ExternalID]++
	return true, nil
}

func (f *fakeRecorder) DiscordMessages(_ context.Context, threadID string, msgs []thread.Stitch, _ string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.tracked[threadID] {
		return 0, thread.ErrNotFound
	}
	n := 0
	for _, m := range msgs {
		if f.stored[m.ExternalID] == 0 {
			n++
		}
		f.stored[m.ExternalID]++
	}
	return n, nil
}

func (f *fakeRecorder) DiscordEdited(_ context.Context, id, content string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits = append(f.edits, edit{id, content, at})
	return nil
}

func (f *fakeRecorder) DiscordDeleted(context.Context, string, time.Time) error { return nil }
func (f *fakeRecorder) DiscordThreadActive(_ context.Context, id string, active bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !active {
		f.inactive = append(f.inactive, id)
	}
	return nil
}
func (f *fakeRecorder) ActiveDiscordThreads(context.Context) ([]thread.DiscordAttachment, error) {
	return nil, nil
}
func (f *fakeRecorder) DiscordTail(context.Context, string, int) ([]thread.Stitch, error) {
	return nil, nil
}

func TestConversations(t *testing.T) {
	t.Parallel()

	t.Run("MentionOpensAThreadAndJoinsIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		rec := newFakeRecorder()
		conv := NewConversations(ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: testLogger(t)})
		m := b.server.PostUserMessage(b.channel, b.alice, "<@"+b.server.BotUser().ID+"> why is the build red?")
		msg := Message{ID: m.ID, ChannelID: b.channel, GuildID: b.guildID, Author: Author{ID: b.alice.ID, Name: "alice"},
			Content: m.Content, MentionsBot: true}
		require.NoError(t, conv.MessageCreated(t.Context(), msg))
		ch, ok := b.server.Channel(m.ID)
		require.True(t, ok)
		require.Equal(t, "why is the build red?", ch.Name)
		require.Contains(t, statuses(b.server.Requests(), "/channels/"+m.ID+"/thread-members/@me"), http.StatusNoContent, "joined")

		// The mention again (a redelivery): the thread exists, nothing new.
		require.NoError(t, conv.MessageCreated(t.Context(), msg))
		require.Equal(t, 2, rec.convs)
		require.Equal(t, 1, rec.stored[m.ID])
	})

	t.Run("MessagePostedWhileTheThreadOpensWaitsForIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		rec := newFakeRecorder()
		early := make(chan string, 1)
		rec.onStart = func(threadID string) {
			// Someone answers in the new thread before weft recorded it,
			// and its event is handled before the recording ends.
			id := b.server.PostUserMessage(threadID, b.alice, "also the weekly build").ID
			time.Sleep(100 * time.Millisecond)
			early <- id
		}
		shard, err := b.client.ForShard(0, 1, NewConversations(ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: testLogger(t)}))
		require.NoError(t, err)
		require.NoError(t, shard.Start(t.Context()))
		t.Cleanup(func() { require.NoError(t, shard.Stop(context.Background())) })
		m := b.server.PostUserMessage(b.channel, b.alice, "<@"+b.server.BotUser().ID+"> why is the build red?")
		id := receive(t, early)
		joins := "/channels/" + m.ID + "/thread-members/@me"
		require.Eventually(t, func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			return rec.stored[id] == 1 && slices.Contains(statuses(b.server.Requests(), joins), http.StatusNoContent)
		}, waitTimeout, 10*time.Millisecond, "the early message is stored once, and the thread joined")
		require.Empty(t, statuses(b.server.Requests(), "/channels/"+m.ID+"/messages"), "no history read")
	})

	// Opening a thread on a mention makes Discord resend the mention as a
	// MESSAGE_UPDATE without edited_timestamp; only the real edit after it
	// is one, recorded as the prompt was (without the mention) and at
	// Discord's edit time.
	t.Run("ThreadOpeningUpdateIsNotAnEdit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		rec := newFakeRecorder()
		shard, err := b.client.ForShard(0, 1, NewConversations(ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: testLogger(t)}))
		require.NoError(t, err)
		require.NoError(t, shard.Start(t.Context()))
		t.Cleanup(func() { require.NoError(t, shard.Stop(context.Background())) })
		mention := "<@" + b.server.BotUser().ID + "> "
		m := b.server.PostUserMessage(b.channel, b.alice, mention+"why is the build red?")
		require.Eventually(t, func() bool {
			_, ok := b.server.Channel(m.ID)
			return ok
		}, waitTimeout, 10*time.Millisecond, "thread opened")
		edited := b.server.EditMessage(b.channel, m.ID, mention+"why is the nightly build red?")
		require.Eventually(t, func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			return len(rec.edits) > 0 && strings.Contains(rec.edits[len(rec.edits)-1].content, "nightly")
		}, waitTimeout, 10*time.Millisecond, "the real edit arrives")
		rec.mu.Lock()
		defer rec.mu.Unlock()
		require.Len(t, rec.edits, 1, "one edit: %v", rec.edits)
		require.Equal(t, "why is the nightly build red?", rec.edits[0].content)
		require.True(t, edited.EditedTimestamp.Equal(rec.edits[0].at), "Discord's edit time")
	})

	t.Run("UntrackedAndUnmentionedAreIgnored", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		rec := newFakeRecorder()
		conv := NewConversations(ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: testLogger(t)})
		require.NoError(t, conv.MessageCreated(t.Context(), Message{ID: "1", ChannelID: b.channel, GuildID: b.guildID, Content: "hi"}))
		require.NoError(t, conv.MessageCreated(t.Context(), Message{ID: "2", ChannelID: "123456789012345678", InThread: true, Content: "hi"}))
		require.Zero(t, rec.convs)
		require.Empty(t, rec.stored)
	})

	t.Run("BackfillOfAVanishedThreadDeactivatesIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		rec := newFakeRecorder()
		conv := NewConversations(ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: testLogger(t)})
		_, err := conv.backfillThread(t.Context(), "123456789012345678", "")
		require.NoError(t, err)
		require.Equal(t, []string{"123456789012345678"}, rec.inactive)
	})
}

type surfaces map[uuid.UUID]string

func (s surfaces) DiscordSurface(_ context.Context, id uuid.UUID) (string, error) {
	if ch, ok := s[id]; ok {
		return ch, nil
	}
	return "", thread.ErrNotFound
}

func TestTypist(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	th, other := uuid.New(), uuid.New()
	typist := NewTypist(TypistDeps{Client: b.client, Surfaces: surfaces{th: b.channel}, Interval: time.Millisecond, Logger: testLogger(t)})

	stop := typist.Typing(t.Context(), th)
	require.Eventually(t, func() bool { return b.server.Typing(b.channel) >= 3 }, waitTimeout, time.Millisecond, "refreshed while the turn runs")
	stop()
	after := b.server.Typing(b.channel)
	typist.Typing(t.Context(), other)() // answers elsewhere: no typing
	require.Equal(t, after, b.server.Typing(b.channel), "nothing after stop")
}

// TestTypistQuietWhileStreaming: once an answer shows as it is written
// (Quiet), the indicator is no longer refreshed; it resumes if the
// channel goes quiet again.
func TestTypistQuietWhileStreaming(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	th := uuid.New()
	var quiet atomic.Bool
	var asked atomic.Int64 // refreshes held back
	typist := NewTypist(TypistDeps{Client: b.client, Surfaces: surfaces{th: b.channel}, Interval: time.Millisecond,
		Quiet: func(ch string) bool {
			q := ch == b.channel && quiet.Load()
			if q {
				asked.Add(1)
			}
			return q
		}, Logger: testLogger(t)})
	stop := typist.Typing(t.Context(), th)
	defer stop()
	require.Eventually(t, func() bool { return b.server.Typing(b.channel) >= 2 }, waitTimeout, time.Millisecond, "typing before the first words")
	quiet.Store(true)
	require.Eventually(t, func() bool { return asked.Load() >= 1 }, waitTimeout, time.Millisecond)
	settled := b.server.Typing(b.channel)
	require.Eventually(t, func() bool { return asked.Load() >= 6 }, waitTimeout, time.Millisecond, "refreshes held back")
	require.Equal(t, settled, b.server.Typing(b.channel), "no typing once the answer shows")
	quiet.Store(false)
	require.Eventually(t, func() bool { return b.server.Typing(b.channel) > settled }, waitTimeout, time.Millisecond, "typing again")
}

// Messages Discord posts itself carry the name of whoever caused them (a
// rename's new thread name, as the renamer's): they are not input.
func TestSystemMessagesAreNotInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ   discordgo.MessageType
		input bool
	}{
		{discordgo.MessageTypeDefault, true},
		{discordgo.MessageTypeReply, true},
		{discordgo.MessageTypeChannelNameChange, false},
		{discordgo.MessageTypeRecipientAdd, false},
		{discordgo.MessageTypeChannelPinnedMessage, false},
		{discordgo.MessageTypeThreadStarterMessage, false},
	}
	for _, tt := range tests {
		m := convertMessage(&discordgo.Message{ID: "1", Type: tt.typ, Content: "release notes", Author: &discordgo.User{ID: "2", Username: "alice"}},
			"bot", channelInfo{isThread: true})
		_, ok := stitchOf(m)
		require.Equal(t, tt.input, ok, "message type %d", tt.typ)
	}
}
