package db

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

func queueAttachDiscord(ctx context.Context, p *pipeline, d *thread.DiscordAttachment) {
	arg := dbsqlc.InsertDiscordAttachmentParams{
		ThreadID:        d.ThreadID,
		DiscordThreadID: d.DiscordThreadID,
		ChannelID:       d.ChannelID,
		GuildID:         d.GuildID,
		CreatedBy:       d.CreatedBy,
		ThreadName:      d.ThreadName,
		LastMessageID:   nullString(d.LastMessageID),
	}
	p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertDiscordAttachment(ctx, arg)) })
}

func queueAttachLinear(ctx context.Context, p *pipeline, l *thread.LinearAttachment) {
	status := l.SessionStatus
	if status == "" {
		status = thread.SessionPending
	}
	arg := dbsqlc.InsertLinearAttachmentParams{
		ThreadID:        l.ThreadID,
		SessionID:       l.SessionID,
		WorkspaceID:     l.WorkspaceID,
		IssueID:         nullString(l.IssueID),
		IssueIdentifier: nullString(l.IssueIdentifier),
		IssueTitle:      nullString(l.IssueTitle),
		ProjectID:       nullString(l.ProjectID),
		TeamID:          nullString(l.TeamID),
		CommentID:       nullString(l.CommentID),
		CreatedByUserID: l.CreatedByUserID,
		SessionStatus:   string(status),
	}
	p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertLinearAttachment(ctx, arg)) })
}

// AttachDiscord attaches an existing thread to a Discord thread: how a Linear
// session continues in Discord. The thread must exist; a Discord thread
// attached elsewhere fails with thread.ErrDiscordThreadAttached.
func (q *Queries) AttachDiscord(ctx context.Context, d thread.DiscordAttachment) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, d.ThreadID, func(p *pipeline) { queueAttachDiscord(ctx, p, &d) })
}

// AttachLinear attaches an existing thread to a Linear agent session.
func (q *Queries) AttachLinear(ctx context.Context, l thread.LinearAttachment) error {
	if err := l.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, l.ThreadID, func(p *pipeline) { queueAttachLinear(ctx, p, &l) })
}

func (q *Queries) attach(ctx context.Context, threadID uuid.UUID, queue func(*pipeline)) error {
	var p pipeline
	queue(&p)
	p.add(func(q *dbsqlc.Queries) error { return translate(q.TouchThread(ctx, threadID)) })
	err := q.atomic(ctx, func(q *Queries) error {
		if _, err := q.Thread(ctx, threadID); err != nil {
			return err
		}
		return p.run(ctx, q.db)
	})
	if err != nil {
		return fmt.Errorf("attach thread %s: %w", threadID, err)
	}
	return nil
}

// DiscordAttachment returns a thread's Discord attachment, or thread.ErrNotFound.
func (q *Queries) DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error) {
	d, err := discordOf(q.gen.DiscordAttachment(ctx, threadID))
	if err != nil {
		return nil, fmt.Errorf("discord attachment: %w", err)
	}
	return d, nil
}

// SetDiscordActive marks a Discord attachment active or not (archived or
// deleted on Discord). The weft thread itself is untouched.
func (q *Queries) SetDiscordActive(ctx context.Context, discordThreadID string, active bool) error {
	n, err := q.gen.SetDiscordActive(ctx, dbsqlc.SetDiscordActiveParams{DiscordThreadID: discordThreadID, IsActive: active})
	if err != nil {
		return fmt.Errorf("set discord active: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("set discord active: %w", thread.ErrNotFound)
	}
	return nil
}

// LinearAttachment returns a thread's Linear attachment, or thread.ErrNotFound.
func (q *Queries) LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error) {
	l, err := linearOf(q.gen.LinearAttachment(ctx, threadID))
	if err != nil {
		return nil, fmt.Errorf("linear attachment: %w", err)
	}
	return l, nil
}

// SetLinearSessionStatus records a Linear session's state and that it was
// active now.
func (q *Queries) SetLinearSessionStatus(ctx context.Context, sessionID string, status thread.SessionStatus) error {
	if !status.Valid() {
		return fmt.Errorf("set linear session status: %w", thread.ErrInvalid)
	}
	n, err := q.gen.SetLinearSessionStatus(ctx, dbsqlc.SetLinearSessionStatusParams{SessionID: sessionID, SessionStatus: string(status)})
	if err != nil {
		return fmt.Errorf("set linear session status: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("set linear session status: %w", thread.ErrNotFound)
	}
	return nil
}

// MarkStaleLinearSessions records as stale the sessions Linear itself
// considers stale: pending or active with no activity for idle. It returns
// how many it marked.
func (q *Queries) MarkStaleLinearSessions(ctx context.Context, idle time.Duration) (int64, error) {
	n, err := q.gen.MarkStaleLinearSessions(ctx, idle.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("mark stale linear sessions: %w", translate(err))
	}
	return n, nil
}
