package db

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

func queueAttachDiscord(b *pgx.Batch, d *thread.DiscordAttachment) {
	b.Queue(`INSERT INTO discord_thread_metadata
		(thread_id, discord_thread_id, channel_id, guild_id, created_by, thread_name, last_message_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		d.ThreadID, d.DiscordThreadID, d.ChannelID, d.GuildID, d.CreatedBy, d.ThreadName, nullString(d.LastMessageID))
}

func queueAttachLinear(b *pgx.Batch, l *thread.LinearAttachment) {
	status := l.SessionStatus
	if status == "" {
		status = thread.SessionPending
	}
	b.Queue(`INSERT INTO linear_thread_metadata
		(thread_id, session_id, workspace_id, issue_id, issue_identifier, issue_title, project_id, team_id,
		 comment_id, created_by_user_id, session_status)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		l.ThreadID, l.SessionID, l.WorkspaceID, nullString(l.IssueID), nullString(l.IssueIdentifier),
		nullString(l.IssueTitle), nullString(l.ProjectID), nullString(l.TeamID), nullString(l.CommentID),
		l.CreatedByUserID, status)
}

// AttachDiscord attaches an existing thread to a Discord thread: how a Linear
// session continues in Discord. The thread must exist; a Discord thread
// attached elsewhere fails with thread.ErrDiscordThreadAttached.
func (q *Queries) AttachDiscord(ctx context.Context, d thread.DiscordAttachment) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, d.ThreadID, func(b *pgx.Batch) { queueAttachDiscord(b, &d) })
}

// AttachLinear attaches an existing thread to a Linear agent session.
func (q *Queries) AttachLinear(ctx context.Context, l thread.LinearAttachment) error {
	if err := l.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, l.ThreadID, func(b *pgx.Batch) { queueAttachLinear(b, &l) })
}

func (q *Queries) attach(ctx context.Context, threadID uuid.UUID, queue func(*pgx.Batch)) error {
	b := &pgx.Batch{}
	queue(b)
	b.Queue(`UPDATE threads SET updated_at = now() WHERE thread_id = $1`, threadID)
	err := q.atomic(ctx, func(q *Queries) error {
		if _, err := q.Thread(ctx, threadID); err != nil {
			return err
		}
		return translate(q.db.SendBatch(ctx, b).Close())
	})
	if err != nil {
		return fmt.Errorf("attach thread %s: %w", threadID, err)
	}
	return nil
}

const discordColumns = `thread_id, discord_thread_id, channel_id, guild_id, created_by, thread_name,
	last_message_id, is_active, created_at, updated_at`

func scanDiscord(row pgx.Row) (*thread.DiscordAttachment, error) {
	var d thread.DiscordAttachment
	var last pgtype.Text
	err := row.Scan(&d.ThreadID, &d.DiscordThreadID, &d.ChannelID, &d.GuildID, &d.CreatedBy, &d.ThreadName,
		&last, &d.Active, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return nil, translate(err)
	}
	d.LastMessageID = str(last)
	return &d, nil
}

// DiscordAttachment returns a thread's Discord attachment, or thread.ErrNotFound.
func (q *Queries) DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error) {
	d, err := scanDiscord(q.db.QueryRow(ctx, `SELECT `+discordColumns+` FROM discord_thread_metadata WHERE thread_id = $1`, threadID))
	if err != nil {
		return nil, fmt.Errorf("discord attachment: %w", err)
	}
	return d, nil
}

// SetDiscordActive marks a Discord attachment active or not (archived or
// deleted on Discord). The weft thread itself is untouched.
func (q *Queries) SetDiscordActive(ctx context.Context, discordThreadID string, active bool) error {
	tag, err := q.db.Exec(ctx, `UPDATE discord_thread_metadata SET is_active = $2, updated_at = now()
		WHERE discord_thread_id = $1`, discordThreadID, active)
	if err != nil {
		return fmt.Errorf("set discord active: %w", translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set discord active: %w", thread.ErrNotFound)
	}
	return nil
}

const linearColumns = `thread_id, session_id, workspace_id, issue_id, issue_identifier, issue_title, project_id,
	team_id, comment_id, created_by_user_id, session_status, is_active, last_activity_at, created_at, updated_at`

func scanLinear(row pgx.Row) (*thread.LinearAttachment, error) {
	var l thread.LinearAttachment
	var issueID, ident, title, project, team, comment pgtype.Text
	err := row.Scan(&l.ThreadID, &l.SessionID, &l.WorkspaceID, &issueID, &ident, &title, &project,
		&team, &comment, &l.CreatedByUserID, &l.SessionStatus, &l.Active, &l.LastActivityAt, &l.CreatedAt, &l.UpdatedAt)
	if err != nil {
		return nil, translate(err)
	}
	l.IssueID, l.IssueIdentifier, l.IssueTitle = str(issueID), str(ident), str(title)
	l.ProjectID, l.TeamID, l.CommentID = str(project), str(team), str(comment)
	return &l, nil
}

// LinearAttachment returns a thread's Linear attachment, or thread.ErrNotFound.
func (q *Queries) LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error) {
	l, err := scanLinear(q.db.QueryRow(ctx, `SELECT `+linearColumns+` FROM linear_thread_metadata WHERE thread_id = $1`, threadID))
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
	tag, err := q.db.Exec(ctx, setSessionStatusSQL, sessionID, status)
	if err != nil {
		return fmt.Errorf("set linear session status: %w", translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set linear session status: %w", thread.ErrNotFound)
	}
	return nil
}

const setSessionStatusSQL = `UPDATE linear_thread_metadata
	SET session_status = $2, last_activity_at = now(), updated_at = now() WHERE session_id = $1`

// MarkStaleLinearSessions records as stale the sessions Linear itself
// considers stale: pending or active with no activity for idle. It returns
// how many it marked.
func (q *Queries) MarkStaleLinearSessions(ctx context.Context, idle time.Duration) (int64, error) {
	tag, err := q.db.Exec(ctx, `UPDATE linear_thread_metadata SET session_status = 'stale', updated_at = now()
		WHERE session_status IN ('pending', 'active') AND last_activity_at < now() - $1 * interval '1 millisecond'`,
		idle.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("mark stale linear sessions: %w", translate(err))
	}
	return tag.RowsAffected(), nil
}
