package db

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// The methods below take a platform's conversation as a thread.Attachment,
// so that the ingester records every platform's events with one shape of
// transaction; each dispatches to its platform's table.

// ThreadByAttachment returns the thread attached to a's conversation (a
// Linear session, a Discord thread, a Slack thread), or thread.ErrNotFound.
func (q *Queries) ThreadByAttachment(ctx context.Context, a thread.Attachment) (*thread.Thread, error) {
	switch a := a.(type) {
	case *thread.LinearAttachment:
		return q.ThreadByLinearSession(ctx, a.SessionID)
	case *thread.DiscordAttachment:
		return q.ThreadByDiscordThread(ctx, a.DiscordThreadID)
	case *thread.SlackAttachment:
		return q.ThreadBySlackThread(ctx, a.TeamID, a.ChannelID, a.ThreadTS)
	case *thread.GitHubAttachment:
		return q.ThreadByGitHubConversation(ctx, a.RepoID, a.Number, a.ReviewRoot)
	}
	return nil, unknownAttachment("thread by attachment", a)
}

// ActivateAttachment records that a conversation has new input: a Linear
// session becomes active, an archived Discord thread active again (Discord
// unarchives a thread people post in). A Slack thread has no such state.
func (q *Queries) ActivateAttachment(ctx context.Context, threadID uuid.UUID, a thread.Attachment) error {
	switch a := a.(type) {
	case *thread.LinearAttachment:
		return q.SetLinearSessionStatus(ctx, a.SessionID, thread.SessionActive)
	case *thread.DiscordAttachment:
		att, err := q.DiscordAttachment(ctx, threadID)
		if err != nil || att.Active {
			return err
		}
		return q.SetDiscordActive(ctx, a.DiscordThreadID, true)
	case *thread.SlackAttachment:
		return nil
	case *thread.GitHubAttachment:
		return q.setGitHubActive(ctx, a, true)
	}
	return unknownAttachment("activate attachment", a)
}

// SetAttachmentActive records that a conversation was closed on its
// platform (a Discord thread archived or deleted, a GitHub issue closed)
// or came back.
func (q *Queries) SetAttachmentActive(ctx context.Context, a thread.Attachment, active bool) error {
	switch a := a.(type) {
	case *thread.DiscordAttachment:
		return q.SetDiscordActive(ctx, a.DiscordThreadID, active)
	case *thread.GitHubAttachment:
		return q.setGitHubActive(ctx, a, active)
	}
	return unknownAttachment("set attachment active", a)
}

// SetSeenThrough moves a conversation's backfill cursor to messageID (see
// SetDiscordLastMessage); only Discord threads are backfilled.
func (q *Queries) SetSeenThrough(ctx context.Context, a thread.Attachment, messageID string) error {
	if d, ok := a.(*thread.DiscordAttachment); ok {
		return q.SetDiscordLastMessage(ctx, d.DiscordThreadID, messageID)
	}
	return unknownAttachment("set seen through", a)
}

// RevokeTenant marks a tenant's installation revoked, and reports whether
// an active one was; only Linear's and GitHub's installations are revoked by
// an event recorded here (Slack's revoke themselves, internal/surface/installation).
func (q *Queries) RevokeTenant(ctx context.Context, t thread.Tenant) (bool, error) {
	switch t.Kind {
	case thread.TenantLinear:
		return q.DeactivateLinearInstallation(ctx, t.ID)
	case thread.TenantGitHub:
		return q.removeGitHubInstallations(ctx, t.ID)
	}
	return false, fmt.Errorf("revoke tenant: %w: %s installations are not revoked here", thread.ErrInvalid, t.Kind)
}

func unknownAttachment(op string, a thread.Attachment) error {
	return fmt.Errorf("%s: %w: attachment %T", op, thread.ErrInvalid, a)
}

// Attach attaches a thread (a's ThreadID) to a's conversation: a Discord
// or Slack thread it continues in. See AttachDiscord and AttachSlack.
func (q *Queries) Attach(ctx context.Context, a thread.Attachment) error {
	switch a := a.(type) {
	case *thread.DiscordAttachment:
		return q.AttachDiscord(ctx, *a)
	case *thread.SlackAttachment:
		return q.AttachSlack(ctx, *a)
	case *thread.GitHubAttachment:
		return q.AttachGitHub(ctx, *a)
	}
	return unknownAttachment("attach", a)
}

// AttachmentTarget is the outbox target of a thread's attachment on
// platform p (a Linear session's id), or thread.ErrNotFound when the thread
// has none there.
func (q *Queries) AttachmentTarget(ctx context.Context, threadID uuid.UUID, p thread.Platform) (string, error) {
	switch p {
	case thread.PlatformLinear:
		l, err := q.LinearAttachment(ctx, threadID)
		if err != nil {
			return "", err
		}
		return l.SessionID, nil
	}
	return "", fmt.Errorf("attachment target: %w: platform %s", thread.ErrInvalid, p)
}
