package discord

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/surface"
)

func TestHistory(t *testing.T) {
	t.Parallel()

	b := setup(t, nil)
	var ids []string
	for i := range 250 {
		ids = append(ids, b.server.PostUserMessage(b.channel, b.alice, "message "+strconv.Itoa(i)).ID)
	}
	idsOf := func(ms []Message) []string {
		out := make([]string, 0, len(ms))
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}

	tests := []struct {
		name  string
		fetch func() ([]Message, error)
		want  []string
	}{
		{"AllFromTheBeginning", func() ([]Message, error) { return b.client.Messages(t.Context(), b.channel, "", 1000) }, ids},
		{"AfterCursorOldestFirst", func() ([]Message, error) { return b.client.Messages(t.Context(), b.channel, ids[99], 50) }, ids[100:150]},
		{"AfterCursorAcrossPages", func() ([]Message, error) { return b.client.Messages(t.Context(), b.channel, ids[9], 150) }, ids[10:160]},
		{"AfterLast", func() ([]Message, error) { return b.client.Messages(t.Context(), b.channel, ids[249], 10) }, []string{}},
		{"LatestAcrossPages", func() ([]Message, error) { return b.client.MessagesBefore(t.Context(), b.channel, "", 120) }, ids[130:]},
		{"BeforeCursor", func() ([]Message, error) { return b.client.MessagesBefore(t.Context(), b.channel, ids[200], 10) }, ids[190:200]},
		{"BeforeNearStart", func() ([]Message, error) { return b.client.MessagesBefore(t.Context(), b.channel, ids[5], 100) }, ids[:5]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fetch()
			require.NoError(t, err)
			require.Equal(t, tt.want, idsOf(got))
		})
	}

	for _, r := range b.server.Requests() {
		require.Equal(t, http.StatusOK, r.Status, "every page request was valid: %s?%s", r.Path, r.Query)
	}

	t.Run("LimitMustBePositive", func(t *testing.T) {
		_, err := b.client.Messages(t.Context(), b.channel, "", 0)
		require.Error(t, err)
	})
}

func TestMessageAndChannel(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	thread := b.server.AddThread(b.channel, "topic")
	posted := b.server.PostUserMessage(thread, b.alice, "hello")

	m, err := b.client.Message(t.Context(), thread, posted.ID)
	require.NoError(t, err)
	require.Equal(t, "hello", m.Content)
	require.True(t, m.InThread)
	require.Equal(t, b.channel, m.ParentChannelID)
	require.Equal(t, b.guildID, m.GuildID)

	ch, err := b.client.Channel(t.Context(), thread)
	require.NoError(t, err)
	require.Equal(t, Channel{ID: thread, GuildID: b.guildID, ParentID: b.channel, Name: "topic", IsThread: true}, ch)

	_, err = b.client.Message(t.Context(), thread, "1")
	requireKind(t, err, surface.KindNotFound)
}

func TestStartThread(t *testing.T) {
	t.Parallel()

	t.Run("FromMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		posted := b.server.PostUserMessage(b.channel, b.alice, "help me")
		long := strings.Repeat("é", 150) + "\nsecond line"
		id, err := b.client.StartThread(t.Context(), b.channel, posted.ID, long)
		require.NoError(t, err)
		require.Equal(t, posted.ID, id, "a message's thread has the message's id")

		th, ok := b.server.Channel(id)
		require.True(t, ok)
		require.Equal(t, discordgo.ChannelTypeGuildPublicThread, th.Type)
		require.Equal(t, maxThreadName, utf8.RuneCountInString(th.Name))
		joins := "/channels/" + id + "/thread-members/@me"
		require.Empty(t, statuses(b.server.Requests(), joins), "joining is left to the caller")
		b.client.JoinThread(t.Context(), id)
		require.Contains(t, statuses(b.server.Requests(), joins), http.StatusNoContent, "joined")

		_, err = b.client.StartThread(t.Context(), b.channel, posted.ID, "again")
		de := requireKind(t, err, surface.KindInvalid)
		require.Equal(t, strconv.Itoa(discordgo.ErrCodeThreadAlreadyCreatedForThisMessage), de.Code)
	})

	t.Run("WithoutMessageIsPublic", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		id, err := b.client.StartThreadWithoutMessage(t.Context(), b.channel, "ENG-123: continue here")
		require.NoError(t, err)
		th, ok := b.server.Channel(id)
		require.True(t, ok)
		require.Equal(t, discordgo.ChannelTypeGuildPublicThread, th.Type, "the fake, like Discord, defaults to private")
		require.Equal(t, "ENG-123: continue here", th.Name)
	})

	t.Run("EmptyName", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		_, err := b.client.StartThreadWithoutMessage(t.Context(), b.channel, " \n\t")
		require.Error(t, err)
	})
}
