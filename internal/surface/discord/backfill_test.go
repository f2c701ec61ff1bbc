package discord_test

import (
	"cmp"
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/ingest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
)

// gateway is one fake Discord and a REST client pointed at it, for a
// shard's Conversations recording through the real ingester.
type gateway struct {
	server  *discordtest.Server
	client  *discord.Client
	guildID string
	channel string
	alice   discordtest.User
}

func setupGateway(t *testing.T) *gateway {
	t.Helper()
	server := discordtest.NewServer(t)
	client, err := discord.New(discord.Config{Token: discordtest.Token, APIBaseURL: server.URL(), Logger: dbtest.Logger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
	guild := "100000000000000001"
	return &gateway{server: server, client: client, guildID: guild, channel: server.AddChannel(guild),
		alice: discordtest.User{ID: "200000000000000001", Name: "alice"}}
}

// failingOnce is the real recorder, failing the first store of one message.
type failingOnce struct {
	*surfacediscord.Recorder
	messageID string
	failed    atomic.Bool
}

func (f *failingOnce) DiscordMessages(ctx context.Context, id string, msgs []thread.Stitch, seenThrough string) (int, error) {
	for _, m := range msgs {
		if m.ExternalID == f.messageID && !f.failed.Swap(true) {
			return 0, errors.New("database briefly unavailable")
		}
	}
	return f.Recorder.DiscordMessages(ctx, id, msgs, seenThrough)
}

// A live message that failed to store is recovered by the next reconnect's
// backfill, even when a later message of its thread was stored meanwhile.
func TestAFailedLiveMessageIsBackfilled(t *testing.T) {
	t.Parallel()
	b := setupGateway(t)
	pool := dbtest.NewPool(t)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	store := db.New(pool, dbtest.Logger(t))
	rec := &failingOnce{Recorder: surfacediscord.NewRecorder(ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: dbtest.Logger(t)}), store, nil, nil)}
	conv := discord.NewConversations(discord.ConversationsDeps{REST: b.client, Recorder: rec, ShardID: 0, ShardCount: 1, Logger: dbtest.Logger(t)})
	ctx := t.Context()

	mention := b.server.PostUserMessage(b.channel, b.alice, "<@"+b.server.BotUser().ID+"> why is the build red?")
	require.NoError(t, conv.MessageCreated(ctx, discord.Message{ID: mention.ID, ChannelID: b.channel, GuildID: b.guildID,
		Author: discord.Author{ID: b.alice.ID, Name: "alice"}, Content: mention.Content, MentionsBot: true}))
	live := func(text string) error {
		p := b.server.PostUserMessage(mention.ID, b.alice, text)
		rec.messageID = cmp.Or(rec.messageID, p.ID) // the first fails
		return conv.MessageCreated(ctx, discord.Message{ID: p.ID, ChannelID: mention.ID, GuildID: b.guildID, InThread: true,
			ParentChannelID: b.channel, Author: discord.Author{ID: b.alice.ID, Name: "alice"}, Content: text})
	}
	require.Error(t, live("first follow-up"))
	first := rec.messageID
	require.NoError(t, live("second follow-up"))

	require.NoError(t, conv.Connected(ctx))
	_, err = store.StitchByExternalID(ctx, thread.PlatformDiscord, first)
	require.NoError(t, err, "the failed message is stored by the backfill")
}

// Edits and deletes made while the gateway was away are recorded by the
// reconnect's backfill, which compares the stored tail with Discord's; the
// thread's starter message, which is not in the thread's history, is left
// as it is.
func TestBackfillReconcilesEditsAndDeletes(t *testing.T) {
	t.Parallel()
	b := setupGateway(t)
	pool := dbtest.NewPool(t)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	store := db.New(pool, dbtest.Logger(t))
	conv := discord.NewConversations(discord.ConversationsDeps{REST: b.client, Recorder: surfacediscord.NewRecorder(ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: dbtest.Logger(t)}), store, nil, nil), ShardID: 0, ShardCount: 1, Logger: dbtest.Logger(t)})
	ctx := t.Context()

	mention := b.server.PostUserMessage(b.channel, b.alice, "<@"+b.server.BotUser().ID+"> why is the build red?")
	require.NoError(t, conv.MessageCreated(ctx, discord.Message{ID: mention.ID, ChannelID: b.channel, GuildID: b.guildID,
		Author: discord.Author{ID: b.alice.ID, Name: "alice"}, Content: mention.Content, MentionsBot: true}))
	post := func(text string) string {
		p := b.server.PostUserMessage(mention.ID, b.alice, text)
		require.NoError(t, conv.MessageCreated(ctx, discord.Message{ID: p.ID, ChannelID: mention.ID, GuildID: b.guildID, InThread: true,
			ParentChannelID: b.channel, Author: discord.Author{ID: b.alice.ID, Name: "alice"}, Content: text}))
		return p.ID
	}
	edited, deleted, kept := post("it fails on main"), post("ignore this"), post("since this morning")

	// While disconnected: nobody hears these events.
	b.server.EditMessage(mention.ID, edited, "it fails on main and on release")
	b.server.DeleteMessage(mention.ID, deleted)
	require.NoError(t, conv.Connected(ctx))

	stitch := func(id string) *thread.Stitch {
		s, err := store.StitchByExternalID(ctx, thread.PlatformDiscord, id)
		require.NoError(t, err)
		return s
	}
	e := stitch(edited)
	require.Equal(t, "it fails on main and on release", e.Content)
	require.False(t, e.EditedAt.IsZero())
	require.True(t, e.DeletedAt.IsZero())
	require.False(t, stitch(deleted).DeletedAt.IsZero(), "the delete is recorded")
	k := stitch(kept)
	require.Equal(t, "since this morning", k.Content)
	require.True(t, k.EditedAt.IsZero() && k.DeletedAt.IsZero())
	require.True(t, stitch(mention.ID).DeletedAt.IsZero(), "the starter message is not taken for deleted")
}
