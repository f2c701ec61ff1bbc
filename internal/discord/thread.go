package discord

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// maxThreadName is Discord's limit on a thread name, in code points.
const maxThreadName = 100

// StartThread opens a public thread on a message (the thread's id equals the
// message's) with the channel's default auto-archive duration and returns
// its id; the caller joins it (JoinThread) once the thread is tracked, off
// the path to its first reply. The request is urgent: the thread is where
// the asker will look for the answer. name is cleaned and cut to 100 code
// points.
func (c *Client) StartThread(ctx context.Context, channelID, messageID, name string) (string, error) {
	clean, err := threadName(name)
	if err != nil {
		return "", err
	}
	ch, err := c.session.MessageThreadStartComplex(channelID, messageID, &discordgo.ThreadStart{Name: clean}, opts(WithPriority(ctx, PriorityUrgent))...)
	if err != nil {
		return "", translate("start thread", err)
	}
	return ch.ID, nil
}

// StartThreadWithoutMessage opens a public thread in a channel without a
// starter message, as continuing a conversation from elsewhere does,
// joins it, and returns its id.
func (c *Client) StartThreadWithoutMessage(ctx context.Context, channelID, name string) (string, error) {
	clean, err := threadName(name)
	if err != nil {
		return "", err
	}
	// The type must be explicit: discordgo omits a zero type and Discord then
	// creates a PRIVATE thread (discord.md pitfall 1).
	data := &discordgo.ThreadStart{Name: clean, Type: discordgo.ChannelTypeGuildPublicThread}
	ch, err := c.session.ThreadStartComplex(channelID, data, opts(ctx)...)
	if err != nil {
		return "", translate("start thread", err)
	}
	c.JoinThread(ctx, ch.ID)
	return ch.ID, nil
}

// JoinThread makes the bot a member of a thread it created. Several projects
// report missing MESSAGE_CREATE in new threads until the bot joined
// (discord.md §1.2); joining is documented to succeed when already a member.
// A failure is only logged: the thread exists and is usable.
func (c *Client) JoinThread(ctx context.Context, threadID string) {
	if err := c.session.ThreadJoin(threadID, opts(ctx)...); err != nil {
		c.logger.WarnContext(ctx, "discord join thread failed", slog.String("thread_id", threadID), slog.Any("error", translate("join thread", err)))
	}
}

// threadName makes name a valid thread name: one line, trimmed, at most 100
// code points.
func threadName(name string) (string, error) {
	clean := strings.Join(strings.Fields(name), " ")
	if clean == "" {
		return "", errors.New("discord: start thread: empty name")
	}
	if utf8.RuneCountInString(clean) > maxThreadName {
		clean = string([]rune(clean)[:maxThreadName-1]) + "…"
	}
	return clean, nil
}
