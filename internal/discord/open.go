package discord

import (
	"context"
	"fmt"
)

// OpenThread opens a public thread named name in a channel, without a
// starter message, and returns its id and its guild's. Given a thread, it
// opens the new one in that thread's channel: threads do not nest. This is
// how a conversation from elsewhere continues in Discord.
func (c *Client) OpenThread(ctx context.Context, channelID, name string) (threadID, guildID string, err error) {
	ch, err := c.Channel(ctx, channelID)
	if err != nil {
		return "", "", err
	}
	parent := ch.ID
	if ch.IsThread {
		parent = ch.ParentID
	}
	if ch.GuildID == "" {
		return "", "", fmt.Errorf("discord: open thread: channel %s is not in a guild", channelID)
	}
	id, err := c.StartThreadWithoutMessage(ctx, parent, name)
	if err != nil {
		return "", "", err
	}
	return id, ch.GuildID, nil
}

// ChannelGuild returns the server a channel is in ("" for a direct
// message), so a caller can check it before opening a thread there.
func (c *Client) ChannelGuild(ctx context.Context, channelID string) (string, error) {
	ch, err := c.Channel(ctx, channelID)
	if err != nil {
		return "", err
	}
	return ch.GuildID, nil
}
