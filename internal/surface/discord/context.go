package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/weft-dev/weft/db"
	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// Context is what Discord adds to the agent's context, on the app's REST
// client: the source of relevant thread discovery (for mentions in a
// channel) and the five Discord search tools; nothing when Discord is off.
// fast is the fast model (WEFT_FAST_MODEL) that summarizes; a nil fast
// leaves no summaries. DISCORD_ALLOWED_GUILDS bounds what conversations
// outside Discord may search.
func (a *App) Context(store *db.Store, fast discovery.FastModel, logger *slog.Logger) (discovery.Source, []tools.Tool) {
	if !a.On() {
		return nil, nil
	}
	search := &DiscordSearch{Reader: NewReader(a.client), Store: store, Fast: fast, Guilds: a.cfg.AllowedGuilds}
	return NewDiscovery(a.client, store, logger), search.Tools()
}

// NewDiscovery is discovery's source for Discord on client c, posting its
// notice in the conversation's Discord thread.
func NewDiscovery(c *discordapi.Client, store *db.Store, logger *slog.Logger) *DiscordChannels {
	return &DiscordChannels{Reader: NewReader(c), Store: store, Post: discoveryNotice(c, logger.With("component", "discovery")), Self: c.BotUserID}
}

// Locator finds the organisation of a Discord thread for tenancy.Reach:
// of one weft tracks, its weft thread's; of any other, read from Discord
// while it is on, its server's, within DISCORD_ALLOWED_GUILDS.
func (a *App) Locator(store LocatorStore) tenancy.Locator {
	var guild ChannelGuild
	if a.On() {
		reader := NewReader(a.client)
		guild = func(ctx context.Context, channelID string) (string, error) {
			ch, err := reader.Channel(ctx, channelID)
			return ch.GuildID, err
		}
	}
	return Locator(store, guild, a.cfg.AllowedGuilds)
}

// LocatorStore is what Locator reads of stored threads. *db.Store
// implements it.
type LocatorStore interface {
	tenancy.Organisations
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
}

// ChannelGuild returns the server of a Discord channel ("" for a direct
// message); a missing channel fails wrapping thread.ErrNotFound.
type ChannelGuild func(ctx context.Context, channelID string) (string, error)

// Locator is App.Locator's, with guild finding the server of a thread weft
// does not track (nil: such a thread is the reader's to answer, when
// Discord is off) and guilds the allowed servers (empty: any).
func Locator(store LocatorStore, guild ChannelGuild, guilds []string) tenancy.Locator {
	return func(ctx context.Context, target string) (string, bool, error) {
		if !thread.IsSnowflake(target) {
			return "", false, nil
		}
		th, err := store.ThreadByDiscordThread(ctx, target)
		switch {
		case err == nil:
			_, org, err := store.ThreadTenant(ctx, th.ID)
			return org, err == nil, err
		case !errors.Is(err, thread.ErrNotFound) || guild == nil:
			return "", false, err
		}
		guildID, err := guild(ctx, target)
		if err != nil {
			return "", false, err
		}
		if len(guilds) > 0 && !slices.Contains(guilds, guildID) || guildID == "" {
			return "", true, nil // no organisation: out of reach of every tenant
		}
		org, err := store.Organisation(ctx, thread.DiscordTenant(guildID))
		return org, err == nil, err
	}
}

// discoveryNotice posts discovery's "searching threads" notice in the
// conversation's Discord thread, straight away rather than through the
// outbox: the outbox sends only the conversation to Discord, and the
// notice is only worth anything before the answer. It is urgent: under a
// burst of mentions it is the asker's first sign that an answer is coming.
// Its nonce comes from the mention, so a retried turn does not post it
// twice.
func discoveryNotice(c *discordapi.Client, logger *slog.Logger) func(context.Context, DiscoveryNotice) {
	return func(ctx context.Context, n DiscoveryNotice) {
		if _, err := c.Send(discordapi.WithPriority(ctx, discordapi.PriorityUrgent), n.DiscordThreadID, n.Text, "discovery/"+n.MentionID); err != nil {
			logger.WarnContext(ctx, "discovery notice not posted", slog.String("thread_id", n.ThreadID.String()), slog.Any("error", err))
		}
	}
}

// NewReader adapts the Discord client to the tools' DiscordReader.
// Discord's not-found errors become thread.ErrNotFound, which the tools
// turn into a clear answer for the model.
func NewReader(c *discordapi.Client) DiscordReader { return discordReader{c} }

// discordReader is NewReader's.
type discordReader struct{ c *discordapi.Client }

// Channel implements DiscordReader.
func (r discordReader) Channel(ctx context.Context, channelID string) (DiscordChannel, error) {
	ch, err := r.c.Channel(ctx, channelID)
	if err != nil {
		return DiscordChannel{}, notFound(err)
	}
	return DiscordChannel{ID: ch.ID, GuildID: ch.GuildID, IsThread: ch.IsThread}, nil
}

// MessagesBefore implements DiscordReader.
func (r discordReader) MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]discovery.ChannelMessage, error) {
	msgs, err := r.c.MessagesBefore(ctx, channelID, beforeID, limit)
	return channelMessages(msgs), notFound(err)
}

// MessagesAfter implements DiscordReader.
func (r discordReader) MessagesAfter(ctx context.Context, channelID, afterID string, limit int) ([]discovery.ChannelMessage, error) {
	msgs, err := r.c.Messages(ctx, channelID, afterID, limit)
	return channelMessages(msgs), notFound(err)
}

// SearchMembers implements DiscordReader.
func (r discordReader) SearchMembers(ctx context.Context, guildID, query string, limit int) ([]DiscordMember, error) {
	ms, err := r.c.SearchMembers(ctx, guildID, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DiscordMember, len(ms))
	for i, m := range ms {
		out[i] = DiscordMember{ID: m.ID, Names: m.Names}
	}
	return out, nil
}

// Message implements DiscordReader.
func (r discordReader) Message(ctx context.Context, channelID, messageID string) (discovery.ChannelMessage, error) {
	m, err := r.c.Message(ctx, channelID, messageID)
	if err != nil {
		return discovery.ChannelMessage{}, notFound(err)
	}
	return channelMessage(m), nil
}

func channelMessages(msgs []discordapi.Message) []discovery.ChannelMessage {
	out := make([]discovery.ChannelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = channelMessage(m)
	}
	return out
}

func channelMessage(m discordapi.Message) discovery.ChannelMessage {
	return discovery.ChannelMessage{ID: m.ID, AuthorID: m.Author.ID, Author: m.Author.Name, Bot: m.Author.Bot,
		Text: m.Content, At: m.Timestamp, Edited: !m.EditedAt.IsZero()}
}

// notFound marks Discord's 404s (unknown channel, message) as
// thread.ErrNotFound, keeping the Discord error.
func notFound(err error) error {
	var de *surface.Error
	if errors.As(err, &de) && de.Kind == surface.KindNotFound {
		return fmt.Errorf("%w: %w", thread.ErrNotFound, err)
	}
	return err
}
