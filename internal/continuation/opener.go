package continuation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// DiscordThreads opens Discord threads. *discord.Client implements it.
type DiscordThreads interface {
	// OpenThread opens a public thread in a channel (a thread's channel,
	// given a thread) and returns its id and its guild's.
	OpenThread(ctx context.Context, channelID, name string) (threadID, guildID string, err error)
	// ChannelGuild returns the server a channel is in.
	ChannelGuild(ctx context.Context, channelID string) (string, error)
}

// DiscordAttachments finds a thread's Discord attachment. *db.Store
// implements it.
type DiscordAttachments interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// DiscordOpener opens public Discord threads named for the conversation's
// goal.
type DiscordOpener struct {
	Store   DiscordAttachments
	Discord DiscordThreads
}

var _ Opener = DiscordOpener{}

// Platform is Discord.
func (DiscordOpener) Platform() thread.Platform { return thread.PlatformDiscord }

// Attached links the Discord thread id continues in.
func (o DiscordOpener) Attached(ctx context.Context, id uuid.UUID) (string, error) {
	att, err := o.Store.DiscordAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	return discordURL(att.GuildID, att.DiscordThreadID), nil
}

// Tenant is the channel's server.
func (o DiscordOpener) Tenant(ctx context.Context, channelID string) (thread.Tenant, error) {
	guild, err := o.Discord.ChannelGuild(ctx, channelID)
	if err != nil {
		return thread.Tenant{}, err
	}
	return thread.DiscordTenant(guild), nil
}

// Open opens a public thread in the channel, named for th's goal.
func (o DiscordOpener) Open(ctx context.Context, th *thread.Thread, op Opening) (*thread.Continuation, error) {
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
func (DiscordOpener) Bold(text string) string { return discordBold(text) }

func discordBold(text string) string { return "**" + text + "**" }

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

// SlackThreads opens Slack threads in one workspace. *slack.Client
// implements it.
type SlackThreads interface {
	// StartThread posts a conversation's top-level message in a channel,
	// naming its goal and linking back to where it comes from (label and
	// URL, either may be empty), and returns its ts (the thread's) and its
	// permalink.
	StartThread(ctx context.Context, channelID, goal, fromLabel, fromURL string) (ts, url string, err error)
	// ThreadURL is the permalink of a thread's parent.
	ThreadURL(ctx context.Context, channelID, ts string) (string, error)
}

// SlackWorkspaces are weft's Slack clients, one per workspace, each with
// the workspace's own token.
type SlackWorkspaces interface {
	// Threads is a workspace's client; one weft is not installed in fails.
	Threads(ctx context.Context, teamID string) (SlackThreads, error)
	// DefaultTeam is SLACK_BOT_TOKEN's workspace; an error without it.
	DefaultTeam(ctx context.Context) (string, error)
}

// SlackAttachments reads a thread's Slack attachment and finds a channel's
// workspace. *db.Store implements it.
type SlackAttachments interface {
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
}

// SlackOpener opens Slack threads under a message naming the conversation
// and linking back to where it comes from.
type SlackOpener struct {
	Store SlackAttachments
	Slack SlackWorkspaces
}

var _ Opener = SlackOpener{}

// Platform is Slack.
func (SlackOpener) Platform() thread.Platform { return thread.PlatformSlack }

// Attached links the Slack thread id continues in.
func (o SlackOpener) Attached(ctx context.Context, id uuid.UUID) (string, error) {
	att, err := o.Store.SlackAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	c, err := o.Slack.Threads(ctx, att.TeamID)
	if err != nil {
		return "", err
	}
	return c.ThreadURL(ctx, att.ChannelID, att.ThreadTS)
}

// Tenant is a channel's workspace: a channel id names none, so it is the
// one weft has threads in that channel in, else SLACK_BOT_TOKEN's.
func (o SlackOpener) Tenant(ctx context.Context, channelID string) (thread.Tenant, error) {
	team, err := o.Store.SlackChannelTeam(ctx, channelID)
	if errors.Is(err, thread.ErrNotFound) {
		team, err = o.Slack.DefaultTeam(ctx)
	}
	if err != nil {
		return thread.Tenant{}, err
	}
	return thread.SlackTenant(team), nil
}

// Open posts the thread's parent message in the channel, with the token of
// its workspace.
func (o SlackOpener) Open(ctx context.Context, th *thread.Thread, op Opening) (*thread.Continuation, error) {
	tenant := op.Tenant
	if tenant.Kind != thread.TenantSlack || tenant.ID == "" {
		var err error
		if tenant, err = o.Tenant(ctx, op.ChannelID); err != nil {
			return nil, err
		}
	}
	team := tenant.ID
	c, err := o.Slack.Threads(ctx, team)
	if err != nil {
		return nil, err
	}
	ts, url, err := c.StartThread(ctx, op.ChannelID, th.Goal, op.Origin.Label, op.Origin.URL)
	if err != nil {
		return nil, err
	}
	return &thread.Continuation{
		Slack: &thread.SlackAttachment{ThreadID: th.ID, TeamID: team, ChannelID: op.ChannelID, ThreadTS: ts, CreatedBy: op.By,
			ChannelType: thread.SlackChannelType(op.ChannelID)},
		URL: url,
	}, nil
}

// Bold is Slack's mrkdwn bold.
func (SlackOpener) Bold(text string) string { return "*" + text + "*" }
