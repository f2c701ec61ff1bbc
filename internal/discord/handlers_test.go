package discord

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
)

func TestGateway(t *testing.T) {
	t.Parallel()

	t.Run("ConnectsWithIntents", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		ids := b.server.Identifies()
		require.Len(t, ids, 1)
		require.Equal(t, DefaultIntents, ids[0].Intents)
		require.Equal(t, "Bot "+discordtest.Token, ids[0].Token)
	})

	t.Run("UserMessageReachesSink", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		posted := b.server.PostUserMessage(b.channel, b.alice, "hey <@"+b.server.BotUser().ID+"> look")
		got := receive(t, b.sink.created)
		require.Equal(t, posted.ID, got.ID)
		require.Equal(t, b.channel, got.ChannelID)
		require.Equal(t, b.guildID, got.GuildID)
		require.Equal(t, Author{ID: b.alice.ID, Name: "alice"}, got.Author)
		require.Equal(t, posted.Content, got.Content)
		require.True(t, got.MentionsBot)
		require.False(t, got.InThread)
		require.WithinDuration(t, posted.Timestamp, got.Timestamp, 0)
	})

	t.Run("BotMessagesAreDropped", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		// weft's own message comes back on the gateway, as on Discord.
		_, err := b.client.Send(t.Context(), b.channel, "weft speaking", "n1")
		require.NoError(t, err)
		b.server.PostUserMessage(b.channel, discordtest.User{ID: "300000000000000001", Name: "otherbot", Bot: true}, "beep")
		b.server.PostUserMessage(b.channel, b.alice, "a person")

		// Same channel, so delivery follows gateway order: anything not
		// dropped would have arrived first.
		require.Equal(t, "a person", receive(t, b.sink.created).Content)
		require.NoError(t, b.client.Stop(t.Context()))
		require.Empty(t, b.sink.created)
	})

	t.Run("AllowedGuildsFailClosed", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *Config) { c.AllowedGuilds = []string{"100000000000000001"} })
		b.start(t)
		other := b.server.AddChannel("100000000000000002")
		dm := b.server.AddChannel("")
		b.server.PostUserMessage(other, b.alice, "other guild")
		b.server.PostUserMessage(dm, b.alice, "direct message")
		b.server.PostUserMessage(b.channel, b.alice, "allowed")

		require.Equal(t, "allowed", receive(t, b.sink.created).Content)
		// Stop drains everything queued, so nothing can still be in flight.
		require.NoError(t, b.client.Stop(t.Context()))
		require.Empty(t, b.sink.created)
	})

	t.Run("EditAndDelete", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		posted := b.server.PostUserMessage(b.channel, b.alice, "frist")
		b.server.EditMessage(b.channel, posted.ID, "first")
		b.server.DeleteMessage(b.channel, posted.ID)

		require.Equal(t, posted.ID, receive(t, b.sink.created).ID)
		edited := receive(t, b.sink.updated)
		require.Equal(t, "first", edited.Content)
		require.False(t, edited.EditedAt.IsZero())
		require.Equal(t, [2]string{b.channel, posted.ID}, receive(t, b.sink.deleted))
	})

	t.Run("ThreadMessagesAndLifecycle", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		thread := b.server.AddThread(b.channel, "a thread")
		b.server.PostUserMessage(thread, b.alice, "in the thread")
		got := receive(t, b.sink.created)
		require.True(t, got.InThread)
		require.Equal(t, b.channel, got.ParentChannelID)

		b.server.ArchiveThread(thread)
		archived := receive(t, b.sink.threads)
		require.Equal(t, thread, archived.ID)
		require.True(t, archived.Archived)
		require.False(t, archived.Active())

		b.server.DeleteThread(thread)
		deleted := receive(t, b.sink.threads)
		require.True(t, deleted.Deleted)
		require.False(t, deleted.Active())
	})

	t.Run("ReconnectResumesAndBackfillFindsMissedMessages", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		seen := b.server.PostUserMessage(b.channel, b.alice, "before the drop")
		require.Equal(t, seen.ID, receive(t, b.sink.created).ID)

		b.server.DropConnection(false)
		missed := b.server.PostUserMessage(b.channel, b.alice, "while disconnected")
		receive(t, b.sink.connected)
		require.Equal(t, 1, b.server.Resumes())
		require.Len(t, b.server.Identifies(), 1)

		backfill, err := b.client.Messages(t.Context(), b.channel, seen.ID, 100)
		require.NoError(t, err)
		require.Len(t, backfill, 1)
		require.Equal(t, missed.ID, backfill[0].ID)

		b.server.PostUserMessage(b.channel, b.alice, "after the reconnect")
		require.Equal(t, "after the reconnect", receive(t, b.sink.created).Content, "the missed message never came over the gateway")
	})

	t.Run("InvalidatedSessionIdentifiesAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.start(t)
		b.server.DropConnection(true)
		receive(t, b.sink.connected)
		require.Len(t, b.server.Identifies(), 2)
		require.Zero(t, b.server.Resumes())

		b.server.PostUserMessage(b.channel, b.alice, "still here")
		require.Equal(t, "still here", receive(t, b.sink.created).Content)
	})

	t.Run("ExplicitGatewayURL", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b2, err := New(Config{Token: discordtest.Token, APIBaseURL: b.server.URL(), GatewayURL: b.server.GatewayURL(), Sink: b.sink, Logger: testLogger(t)})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b2.Stop(context.Background())) })
		require.NoError(t, b2.Start(t.Context()))
		receive(t, b.sink.connected)
		for _, r := range b.server.Requests() {
			require.NotContains(t, r.Path, "/gateway", "the gateway URL was not looked up")
		}
	})

	t.Run("StartNeedsSink", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *Config) { c.Sink = nil })
		require.Error(t, b.client.Start(t.Context()))
	})
}
