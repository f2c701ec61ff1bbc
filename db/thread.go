package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

const threadColumns = `thread_id, thread_type, goal, status, waiting_reason, result, error, agent_name,
	stitch_count, head_stitch_id, lease_owner, lease_expires_at, created_at, updated_at, last_activity_at, finished_at`

func scanThread(row pgx.Row) (*thread.Thread, error) {
	var (
		t                            thread.Thread
		waiting, errText, leaseOwner pgtype.Text
		head                         pgtype.UUID
		leaseExpires, finishedAt     pgtype.Timestamptz
		result                       []byte
	)
	err := row.Scan(&t.ID, &t.Type, &t.Goal, &t.Status, &waiting, &result, &errText, &t.AgentName,
		&t.StitchCount, &head, &leaseOwner, &leaseExpires, &t.CreatedAt, &t.UpdatedAt, &t.LastActivityAt, &finishedAt)
	if err != nil {
		return nil, translate(err)
	}
	t.WaitingReason = thread.WaitingReason(waiting.String)
	t.Result = result
	t.Error = str(errText)
	t.HeadStitchID = uid(head)
	t.LeaseOwner = str(leaseOwner)
	t.LeaseExpires = tm(leaseExpires)
	t.FinishedAt = tm(finishedAt)
	return &t, nil
}

const insertThreadSQL = `
	INSERT INTO threads (thread_id, thread_type, goal, status, agent_name, stitch_count, head_stitch_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	RETURNING ` + threadColumns

func insertThreadArgs(d *thread.Draft) []any {
	return []any{d.Thread.ID, d.Thread.Type, d.Thread.Goal, d.Thread.Status, d.Thread.AgentName,
		len(d.Stitches), nullUUID(d.Thread.HeadStitchID)}
}

// CreateThread writes a Builder's draft (thread, attachments, first stitches)
// atomically. A Discord thread or Linear session attached elsewhere already
// fails with thread.ErrDiscordThreadAttached or thread.ErrLinearSessionAttached.
func (q *Queries) CreateThread(ctx context.Context, d *thread.Draft) (*thread.Thread, error) {
	var created *thread.Thread
	// Atomic on its own; inside a Tx, a savepoint, so a caller can go on
	// after a conflict.
	err := q.atomic(ctx, func(q *Queries) error {
		w, err := q.Write(ctx, Write{New: d})
		if err == nil {
			created = w.Thread
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create thread: %w", err)
	}
	return created, nil
}

// Thread returns the thread with id, or thread.ErrNotFound.
func (q *Queries) Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error) {
	t, err := scanThread(q.db.QueryRow(ctx, `SELECT `+threadColumns+` FROM threads WHERE thread_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get thread %s: %w", id, err)
	}
	return t, nil
}

// ThreadByLinearSession returns the thread attached to a Linear agent session.
func (q *Queries) ThreadByLinearSession(ctx context.Context, sessionID string) (*thread.Thread, error) {
	t, err := scanThread(q.db.QueryRow(ctx, `
		SELECT `+threadColumns+` FROM threads
		WHERE thread_id = (SELECT thread_id FROM linear_thread_metadata WHERE session_id = $1)`, sessionID))
	if err != nil {
		return nil, fmt.Errorf("thread by linear session: %w", err)
	}
	return t, nil
}

// ThreadByDiscordThread returns the thread attached to a Discord thread.
func (q *Queries) ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error) {
	t, err := scanThread(q.db.QueryRow(ctx, `
		SELECT `+threadColumns+` FROM threads
		WHERE thread_id = (SELECT thread_id FROM discord_thread_metadata WHERE discord_thread_id = $1)`, discordThreadID))
	if err != nil {
		return nil, fmt.Errorf("thread by discord thread: %w", err)
	}
	return t, nil
}

// statusSet moves a thread to status $2 (setStatusArgs: $3 waiting reason,
// $4 result, $5 error); the statement using it checks $6, the statuses the
// move may come from.
const statusSet = `
		status = $2,
		waiting_reason = $3,
		result = CASE WHEN $2 = 'completed' THEN $4::jsonb END,
		error = CASE WHEN $2 = 'failed' THEN $5 END,
		finished_at = CASE WHEN $2 IN ('completed', 'failed', 'aborted') THEN now() ELSE finished_at END,
		updated_at = now(),
		last_activity_at = now()`

const setStatusSQL = `UPDATE threads SET ` + statusSet + `
	WHERE thread_id = $1 AND status = ANY($6)
	RETURNING ` + threadColumns

func setStatusArgs(id uuid.UUID, c thread.StatusChange) []any {
	return []any{id, c.To, nullString(string(c.WaitingReason)), nullJSON(c.Result), nullString(c.Error), thread.SourcesOf(c.To)}
}

// SetStatus moves a thread to a new status if the status machine allows it
// from the status it is in now; otherwise it fails with a
// *thread.TransitionError (an ErrConflict). The check and the write are one
// statement, so two concurrent changes cannot both pass it.
func (q *Queries) SetStatus(ctx context.Context, id uuid.UUID, c thread.StatusChange) (*thread.Thread, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, err := scanThread(q.db.QueryRow(ctx, setStatusSQL, setStatusArgs(id, c)...))
	if errors.Is(err, thread.ErrNotFound) {
		cur, gerr := q.Thread(ctx, id)
		if gerr != nil {
			return nil, fmt.Errorf("set status: %w", gerr)
		}
		return nil, &thread.TransitionError{From: cur.Status, To: c.To}
	}
	if err != nil {
		return nil, fmt.Errorf("set status: %w", err)
	}
	return t, nil
}

// ThreadFilter selects threads for ListThreads. Zero fields do not filter.
type ThreadFilter struct {
	Status       thread.Status
	Type         thread.Type
	Platform     thread.Platform // discord or linear: threads attached there
	UpdatedSince time.Time
	// After continues a listing (newest first) after the thread last seen.
	AfterUpdated time.Time
	AfterID      uuid.UUID
	Limit        int
}

// ListThreads lists threads newest-updated first.
func (q *Queries) ListThreads(ctx context.Context, f ThreadFilter) ([]thread.Thread, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 50
	}
	rows, err := q.db.Query(ctx, `
		SELECT `+threadColumns+` FROM threads t
		WHERE ($1 = '' OR status = $1)
		  AND ($2 = '' OR thread_type = $2)
		  AND ($3 = '' OR ($3 = 'discord' AND EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id))
		               OR ($3 = 'linear' AND EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id)))
		  AND ($4::timestamptz IS NULL OR updated_at >= $4)
		  AND ($5::timestamptz IS NULL OR (updated_at, thread_id) < ($5, $6))
		ORDER BY updated_at DESC, thread_id DESC
		LIMIT $7`,
		string(f.Status), string(f.Type), string(f.Platform), nullTime(f.UpdatedSince), nullTime(f.AfterUpdated), f.AfterID, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", translate(err))
	}
	out, err := collect(rows, scanThread)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}
