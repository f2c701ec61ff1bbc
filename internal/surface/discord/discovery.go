package discord

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/thread"
)

// DiscordAttachments finds a thread's Discord attachment. *db.Store
// implements it.
type DiscordAttachments interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// DiscoveryNotice is discovery's notice for the person who mentioned weft
// in a Discord channel.
type DiscoveryNotice struct {
	ThreadID        uuid.UUID
	DiscordThreadID string // the conversation's Discord thread: post it there
	MentionID       string // the mention's message id, an idempotency key
	Text            string
}

// DiscordChannels is discovery.Discovery's source for Discord: the mention's channel
// and its threads, read through the REST API.
type DiscordChannels struct {
	Reader DiscordReader
	Store  DiscordAttachments
	// Post, if set, posts discovery's notice. cmd/weft posts it in the Discord
	// thread with the mention id as the nonce, so a retried turn does not
	// post it twice.
	Post func(ctx context.Context, n DiscoveryNotice)
	// Self, if set, is weft's bot user id ("" until the gateway said):
	// its own top-level posts are not ranked.
	Self func() string
}

var _ discovery.Source = (*DiscordChannels)(nil)

// Platform implements discovery.Source.
func (*DiscordChannels) Platform() string { return "Discord" }

// Channel implements discovery.Source. weft's Discord sink opens a thread on
// a mention in a channel and makes the mention the new weft thread's
// initial prompt, sourced from Discord, with the mention's message id; the
// attachment names the channel. Everything said inside a thread is a
// discord_message stitch, and a conversation continued from another
// platform has that platform's or the API's initial prompt, so discovery is skipped there: the
// thread's own history is the context then.
func (s *DiscordChannels) Channel(ctx context.Context, th *thread.Thread, mention *thread.Stitch) (*discovery.Channel, error) {
	if !thread.IsSnowflake(mention.ExternalID) {
		return nil, nil
	}
	att, err := s.Store.DiscordAttachment(ctx, th.ID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ch := &discovery.Channel{Key: "discord:" + att.ChannelID, ID: att.ChannelID, ThreadID: th.ID,
		Reply: att.DiscordThreadID, MentionID: mention.ExternalID}
	if s.Self != nil {
		ch.BotUserID = s.Self()
	}
	return ch, nil
}

// Before implements discovery.Source.
func (*DiscordChannels) Before(a, b string) bool { return thread.CompareSnowflakes(a, b) < 0 }

// TopLevel implements discovery.Source: one page of the channel before the
// mention.
func (s *DiscordChannels) TopLevel(ctx context.Context, ch *discovery.Channel, n int) ([]discovery.ChannelMessage, error) {
	return s.Reader.MessagesBefore(ctx, ch.ID, ch.MentionID, n)
}

// Thread implements discovery.Source: a thread started from a message has
// the message's id.
func (s *DiscordChannels) Thread(ctx context.Context, _ *discovery.Channel, root discovery.ChannelMessage, n int) ([]discovery.ChannelMessage, error) {
	return s.Reader.MessagesBefore(ctx, root.ID, "", n)
}

// Notify implements discovery.Source.
func (s *DiscordChannels) Notify(ctx context.Context, ch *discovery.Channel) {
	if s.Post != nil {
		s.Post(ctx, DiscoveryNotice{ThreadID: ch.ThreadID, DiscordThreadID: ch.Reply, MentionID: ch.MentionID,
			Text: "🔎 Searching this channel's recent threads for context…"})
	}
}
