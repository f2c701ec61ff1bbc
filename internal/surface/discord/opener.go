package discord

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/thread"
)

// ThreadOpener opens Discord threads. *discord.Client implements it.
type ThreadOpener interface {
	// OpenThread opens a public thread in a channel (a thread's channel,
	// given a thread) and returns its id and its guild's.
	OpenThread(ctx context.Context, channelID, name string) (threadID, guildID string, err error)
	// ChannelGuild returns the server a channel is in.
	ChannelGuild(ctx context.Context, channelID string) (string, error)
}

// OpenerStore finds a thread's Discord attachment. *db.Store
// implements it.
type OpenerStore interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// Opener opens public Discord threads, for continuation.Continuer, named for the conversation's
// goal.
type Opener struct {
	Store   OpenerStore
	Discord ThreadOpener
}

var _ continuation.Opener = Opener{}

// Platform is Discord.
func (Opener) Platform() thread.Platform { return thread.PlatformDiscord }

// Attached links the Discord thread id continues in.
func (o Opener) Attached(ctx context.Context, id uuid.UUID) (string, error) {
	att, err := o.Store.DiscordAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	return discordURL(att.GuildID, att.DiscordThreadID), nil
}

// Tenant is the channel's server.
func (o Opener) Tenant(ctx context.Context, channelID string) (thread.Tenant, error) {
	guild, err := o.Discord.ChannelGuild(ctx, channelID)
	if err != nil {
		return thread.Tenant{}, err
	}
	return thread.DiscordTenant(guild), nil
}

// Open opens a public thread in the channel, named for th's goal.
func (o Opener) Open(ctx context.Context, th *thread.Thread, op continuation.Opening) (*thread.Continuation, error) {
	discordID, guildID, err := o.Discord.OpenThread(ctx, op.ChannelID, th.Goal)
	if err != nil {
		return nil, err
	}
	return &thread.Continuation{
		Discord: &thread.DiscordAttachment{ThreadID: th.ID, DiscordThreadID: discordID, ChannelID: op.ChannelID, GuildID: guildID,
			CreatedBy: op.By, ThreadName: threadName(th.Goal)},
		URL: discordURL(guildID, discordID),
	}, nil
}

// Bold is Discord's markdown bold.
func (Opener) Bold(text string) string { return "**" + text + "**" }

// discordURL links a thread in Discord's clients.
func discordURL(guildID, threadID string) string {
	return fmt.Sprintf("https://discord.com/channels/%s/%s", guildID, threadID)
}

// maxThreadName is Discord's thread name limit, in code points.
const maxThreadName = 100

// threadName fits a goal into a thread name: one line, at most 100 code
// points, as the Discord client cuts it too.
func threadName(goal string) string {
	name := strings.Join(strings.Fields(goal), " ")
	if name == "" {
		name = "weft conversation"
	}
	return truncate(name, maxThreadName)
}

// truncate cuts s to n code points, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
