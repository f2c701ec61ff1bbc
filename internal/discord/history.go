package discord

import (
	"context"
	"errors"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/thread"
)

// maxHistoryPage is Discord's page size limit for Get Channel Messages;
// discordgo does not clamp it.
const maxHistoryPage = 100

// Messages returns up to limit messages posted after afterID (exclusive; ""
// means from the channel's beginning), oldest first, paging as needed. It is
// what backfill uses after a reconnect: call again with the last id returned
// to continue. Discord answers each page newest first even when paging
// forward (discord-api-docs#7740), so pages are sorted here.
func (c *Client) Messages(ctx context.Context, channelID, afterID string, limit int) ([]Message, error) {
	if limit <= 0 {
		return nil, errors.New("discord: messages: limit must be positive")
	}
	if afterID == "" {
		afterID = "0"
	}
	return c.history(ctx, "messages", channelID, limit, func(page int, cursor string) ([]*discordgo.Message, string, error) {
		if cursor == "" {
			cursor = afterID
		}
		raw, err := c.session.ChannelMessages(channelID, page, "", cursor, "", opts(ctx)...)
		if err != nil || len(raw) == 0 {
			return raw, "", err
		}
		return raw, slices.MaxFunc(raw, byID).ID, nil
	})
}

// MessagesBefore returns the newest limit messages posted before beforeID
// (exclusive; "" means the channel's latest), oldest first, paging back as
// needed. This is the thread-history read: newest first, so a cap never
// starves recent messages.
func (c *Client) MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]Message, error) {
	if limit <= 0 {
		return nil, errors.New("discord: messages before: limit must be positive")
	}
	return c.history(ctx, "messages before", channelID, limit, func(page int, cursor string) ([]*discordgo.Message, string, error) {
		if cursor == "" {
			cursor = beforeID
		}
		raw, err := c.session.ChannelMessages(channelID, page, cursor, "", "", opts(ctx)...)
		if err != nil || len(raw) == 0 {
			return raw, "", err
		}
		return raw, slices.MinFunc(raw, byID).ID, nil
	})
}

// fetchPage reads one page at cursor ("" on the first call) and returns it
// with the cursor for the next page.
type fetchPage func(page int, cursor string) ([]*discordgo.Message, string, error)

// history pages through a channel until limit messages or the end, then
// returns them oldest first with thread placement filled in.
func (c *Client) history(ctx context.Context, op, channelID string, limit int, fetch fetchPage) ([]Message, error) {
	var all []*discordgo.Message
	cursor := ""
	for len(all) < limit {
		page := min(limit-len(all), maxHistoryPage)
		raw, next, err := fetch(page, cursor)
		if err != nil {
			return nil, translate(op, err)
		}
		all = append(all, raw...)
		if len(raw) < page {
			break
		}
		cursor = next
	}
	slices.SortFunc(all, byID)
	if len(all) == 0 {
		return nil, nil
	}
	where, err := c.channelInfo(ctx, channelID)
	if err != nil {
		return nil, err
	}
	bot := c.botUserID()
	out := make([]Message, 0, len(all))
	for _, m := range all {
		out = append(out, convertMessage(m, bot, where))
	}
	return out, nil
}

// byID orders messages by snowflake.
func byID(a, b *discordgo.Message) int { return thread.CompareSnowflakes(a.ID, b.ID) }

// Message fetches one message.
func (c *Client) Message(ctx context.Context, channelID, messageID string) (Message, error) {
	m, err := c.session.ChannelMessage(channelID, messageID, opts(ctx)...)
	if err != nil {
		return Message{}, translate("message", err)
	}
	where, err := c.channelInfo(ctx, channelID)
	if err != nil {
		return Message{}, err
	}
	return convertMessage(m, c.botUserID(), where), nil
}

// Channel fetches a channel or thread.
func (c *Client) Channel(ctx context.Context, channelID string) (Channel, error) {
	ch, err := c.session.Channel(channelID, opts(ctx)...)
	if err != nil {
		return Channel{}, translate("channel", err)
	}
	return convertChannel(ch), nil
}
