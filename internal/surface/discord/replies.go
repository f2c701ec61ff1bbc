// The replies source reads Discord threads for get-thread-replies: it
// adapts the Discord client to replies.Discord, its messages in replies'
// terms and its failures as replies' error codes. The wiring plugs it in
// when Discord is configured.

package discord

import (
	"context"
	"errors"

	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/surface"
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

// failure is a Discord failure as get-thread-replies answers it; any other
// error (a cancelled context, a broken connection) is left as it is.
func failure(err error) error {
	var de *surface.Error
	if !errors.As(err, &de) {
		return err
	}
	e := &httpapi.Error{Err: err}
	switch de.Kind {
	case surface.KindRateLimited:
		e.Code, e.Message, e.RetryAfter = httpapi.CodeRateLimit, "Discord is rate limiting weft; try again later", de.RetryAfter
	case surface.KindAuth:
		e.Code, e.Message = httpapi.CodeAuthentication, "Discord rejected weft's bot token"
	case surface.KindForbidden:
		e.Code, e.Message = httpapi.CodeAuthorization, "weft may not read this Discord thread"
	case surface.KindNotFound:
		e.Code, e.Message = httpapi.CodeNotFound, "no such Discord thread"
	case surface.KindInvalid:
		e.Code, e.Message = httpapi.CodeInvalidArgument, "Discord rejected the request"
	default:
		// KindServer: Discord failed; another try may not.
		e.Code, e.Message = httpapi.CodeUnavailable, "Discord failed; try again later"
	}
	return e
}
