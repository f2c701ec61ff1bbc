package slack

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/thread"
)

// ThreadStarter opens Slack threads in one workspace. *slack.Client
// implements it.
type ThreadStarter interface {
	// StartThread posts a conversation's top-level message in a channel,
	// naming its goal and linking back to where it comes from (label and
	// URL, either may be empty), and returns its ts (the thread's) and its
	// permalink.
	StartThread(ctx context.Context, channelID, goal, fromLabel, fromURL string) (ts, url string, err error)
	// ThreadURL is the permalink of a thread's parent.
	ThreadURL(ctx context.Context, channelID, ts string) (string, error)
}

// OpenerWorkspaces are weft's Slack clients, one per workspace, each with
// the workspace's own token.
type OpenerWorkspaces interface {
	// Threads is a workspace's client; one weft is not installed in fails.
	Threads(ctx context.Context, teamID string) (ThreadStarter, error)
	// DefaultTeam is SLACK_BOT_TOKEN's workspace; an error without it.
	DefaultTeam(ctx context.Context) (string, error)
}

// OpenerStore reads a thread's Slack attachment and finds a channel's
// workspace. *db.Store implements it.
type OpenerStore interface {
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
}

// Opener opens Slack threads, for continuation.Continuer, under a message naming the conversation
// and linking back to where it comes from.
type Opener struct {
	Store OpenerStore
	Slack OpenerWorkspaces
}

var _ continuation.Opener = Opener{}

// Platform is Slack.
func (Opener) Platform() thread.Platform { return thread.PlatformSlack }

// Attached links the Slack thread id continues in.
func (o Opener) Attached(ctx context.Context, id uuid.UUID) (string, error) {
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
func (o Opener) Tenant(ctx context.Context, channelID string) (thread.Tenant, error) {
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
func (o Opener) Open(ctx context.Context, th *thread.Thread, op continuation.Opening) (*thread.Continuation, error) {
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
func (Opener) Bold(text string) string { return "*" + text + "*" }
