// The replies source reads Discord threads for get-thread-replies: it
// adapts the Discord client to replies.Discord, its messages in replies'
// terms and its failures as replies' error codes. The wiring plugs it in
// when Discord is configured.

package discord

import (
	"context"

	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/threadview"
)

// RepliesReader is a *discordapi.Client as get-thread-replies reads it.
type RepliesReader struct{ c *discordapi.Client }

var _ replies.Discord = RepliesReader{}

// NewReplies reads through c.
func NewReplies(c *discordapi.Client) RepliesReader { return RepliesReader{c} }

// Channel implements replies.Discord.
func (r RepliesReader) Channel(ctx context.Context, channelID string) (replies.DiscordChannel, error) {
	ch, err := r.c.Channel(ctx, channelID)
	return replies.DiscordChannel{IsThread: ch.IsThread, ParentID: ch.ParentID}, failure(err)
}

// Message implements replies.Discord.
func (r RepliesReader) Message(ctx context.Context, channelID, messageID string) (replies.DiscordMessage, error) {
	m, err := r.c.Message(ctx, channelID, messageID)
	return message(m), failure(err)
}

// Messages implements replies.Discord.
func (r RepliesReader) Messages(ctx context.Context, channelID, afterID string, limit int) ([]replies.DiscordMessage, error) {
	msgs, err := r.c.Messages(ctx, channelID, afterID, limit)
	return messages(msgs), failure(err)
}

// MessagesBefore implements replies.Discord.
func (r RepliesReader) MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]replies.DiscordMessage, error) {
	msgs, err := r.c.MessagesBefore(ctx, channelID, beforeID, limit)
	return messages(msgs), failure(err)
}

func messages(msgs []discordapi.Message) []replies.DiscordMessage {
	out := make([]replies.DiscordMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, message(m))
	}
	return out
}

func message(m discordapi.Message) replies.DiscordMessage {
	return replies.DiscordMessage{
		ID: m.ID, Author: threadview.Author{ID: m.Author.ID, Name: m.Author.Name, Bot: m.Author.Bot},
		Content: m.Content, ReferencedID: m.ReferencedMessageID, CreatedAt: m.Timestamp, EditedAt: m.EditedAt,
	}
}

// failure is a Discord failure as get-thread-replies answers it.
func failure(err error) error {
	return replies.PlatformFailure(err, "Discord", "Discord thread", "Discord thread")
}
