package discord

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// TestEditAndDelete: the bot edits and deletes its own messages through
// discordgo, pinging nobody; another's message cannot be edited, an empty
// edit is refused, and a message already gone deletes without error.
func TestEditAndDelete(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := t.Context()
	id, err := b.client.SendPart(ctx, b.channel, "The", "answer-1", 0)
	require.NoError(t, err)
	again, err := b.client.SendPart(ctx, b.channel, "The", "answer-1", 0)
	require.NoError(t, err)
	require.Equal(t, id, again, "the part's nonce returns the message made")

	require.NoError(t, b.client.Edit(ctx, b.channel, id, "The answer @everyone"))
	edits := b.server.Edits(b.channel)
	require.Len(t, edits, 1)
	require.Equal(t, "The answer @everyone", edits[0].Content)
	require.Empty(t, edits[0].AllowedMentions.Parse)
	require.Equal(t, "The answer @everyone", b.server.Sent(b.channel)[0].Content)
	require.Error(t, b.client.Edit(ctx, b.channel, id, " "))

	other := b.server.PostUserMessage(b.channel, b.alice, "mine")
	var e *surface.Error
	require.ErrorAs(t, b.client.Edit(ctx, b.channel, other.ID, "hijacked"), &e)
	require.Equal(t, surface.KindForbidden, e.Kind)

	require.NoError(t, b.client.Delete(ctx, b.channel, id))
	require.Empty(t, b.server.Sent(b.channel))
	require.NoError(t, b.client.Delete(ctx, b.channel, id), "already gone")
}

// TestSenderFinishes: a row delivered into its streamed messages edits
// what differs, posts the parts past them once however often it is sent,
// and deletes streamed messages past a text that came back shorter.
func TestSenderFinishes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := t.Context()
	s := NewSender(b.client)
	post := func(text string) string {
		id, err := b.client.SendPart(ctx, b.channel, text, thread.NewID().String(), 0)
		require.NoError(t, err)
		return id
	}

	long := strings.Repeat("word ", 500) // two parts
	first := post("word word")
	o := outboxRow(t, b.channel, thread.OutboxResponse, long)
	for range 2 {
		got, err := s.Finish(ctx, o, []string{first}, nil)
		require.NoError(t, err)
		require.Equal(t, first, got)
	}
	sent := b.server.Sent(b.channel)
	require.Len(t, sent, 2)
	require.Equal(t, Parts(strings.TrimSpace(long)), []string{sent[0].Content, sent[1].Content})

	// Known to hold its text already: no edit.
	edits := len(b.server.Edits(b.channel))
	o2 := outboxRow(t, b.channel, thread.OutboxResponse, "Short.")
	extra := post("stale second part")
	mine := post("Short.")
	_, err := s.Finish(ctx, o2, []string{mine, extra}, []string{"Short.", "stale second part"})
	require.NoError(t, err)
	require.Len(t, b.server.Edits(b.channel), edits)
	sent = b.server.Sent(b.channel)
	require.Len(t, sent, 3, "the surplus message deleted")
	require.Equal(t, "Short.", sent[2].Content)
}
