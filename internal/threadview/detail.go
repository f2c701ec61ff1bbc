package threadview

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Discord is a thread's Discord attachment.
type Discord struct {
	DiscordThreadID string `json:"discord_thread_id"`
	ChannelID       string `json:"channel_id"`
	GuildID         string `json:"guild_id"`
	ThreadName      string `json:"thread_name"`
	Active          bool   `json:"active"`
}

// Linear is a thread's Linear attachment.
type Linear struct {
	SessionID       string               `json:"session_id"`
	WorkspaceID     string               `json:"workspace_id"`
	IssueID         string               `json:"issue_id,omitempty"`
	IssueIdentifier string               `json:"issue_identifier,omitempty"`
	IssueTitle      string               `json:"issue_title,omitempty"`
	SessionStatus   thread.SessionStatus `json:"session_status"`
	Active          bool                 `json:"active"`
	LastActivityAt  time.Time            `json:"last_activity_at"`
}

// Slack is a thread's Slack attachment.
type Slack struct {
	TeamID      string `json:"team_id"`
	ChannelID   string `json:"channel_id"`
	ThreadTS    string `json:"thread_ts"`
	ChannelType string `json:"channel_type"`
	Active      bool   `json:"active"`
}

// GitHub is a thread's GitHub attachment: an issue or pull request, or
// one review thread of a pull request (review_root_id set).
type GitHub struct {
	InstallationID int64  `json:"installation_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	Number         int    `json:"number"`
	PullRequest    bool   `json:"pull_request"`
	ReviewRootID   int64  `json:"review_root_id,omitempty"`
	Active         bool   `json:"active"`
}

// Detail is a thread with its platform attachments: a cross-platform
// thread has several.
type Detail struct {
	Thread
	Discord *Discord `json:"discord,omitempty"`
	Linear  *Linear  `json:"linear,omitempty"`
	Slack   *Slack   `json:"slack,omitempty"`
	GitHub  *GitHub  `json:"github,omitempty"`
}

// Reader reads a thread and its attachments. *db.Store implements it.
type Reader interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
	GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error)
}

// Get returns a thread with its attachments, or thread.ErrNotFound.
func Get(ctx context.Context, store Reader, id uuid.UUID) (*Detail, error) {
	th, err := store.Thread(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &Detail{Thread: Of(th)}
	d, err := store.DiscordAttachment(ctx, id)
	switch {
	case err == nil:
		out.Discord = &Discord{DiscordThreadID: d.DiscordThreadID, ChannelID: d.ChannelID, GuildID: d.GuildID,
			ThreadName: d.ThreadName, Active: d.Active}
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	}
	l, err := store.LinearAttachment(ctx, id)
	switch {
	case err == nil:
		out.Linear = &Linear{SessionID: l.SessionID, WorkspaceID: l.WorkspaceID, IssueID: l.IssueID,
			IssueIdentifier: l.IssueIdentifier, IssueTitle: l.IssueTitle, SessionStatus: l.SessionStatus,
			Active: l.Active, LastActivityAt: l.LastActivityAt}
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	}
	sl, err := store.SlackAttachment(ctx, id)
	switch {
	case err == nil:
		out.Slack = &Slack{TeamID: sl.TeamID, ChannelID: sl.ChannelID, ThreadTS: sl.ThreadTS,
			ChannelType: sl.ChannelType, Active: sl.Active}
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	}
	g, err := store.GitHubAttachment(ctx, id)
	switch {
	case err == nil:
		out.GitHub = &GitHub{InstallationID: g.InstallationID, Owner: g.Owner, Repo: g.Repo, Number: g.Number,
			PullRequest: g.PullRequest, ReviewRootID: g.ReviewRoot, Active: g.Active}
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	}
	return out, nil
}
