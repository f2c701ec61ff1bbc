package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

func insertThreadParams(d *thread.Draft) dbsqlc.InsertThreadParams {
	return dbsqlc.InsertThreadParams{
		ThreadID:     d.Thread.ID,
		ThreadType:   string(d.Thread.Type),
		Goal:         d.Thread.Goal,
		Status:       string(d.Thread.Status),
		AgentName:    d.Thread.AgentName,
		StitchCount:  int64(len(d.Stitches)),
		HeadStitchID: nullUUID(d.Thread.HeadStitchID),
	}
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
	t, err := threadOf(q.gen.Thread(ctx, id))
	if err != nil {
		return nil, fmt.Errorf("get thread %s: %w", id, err)
	}
	return t, nil
}

// ThreadByLinearSession returns the thread attached to a Linear agent session.
func (q *Queries) ThreadByLinearSession(ctx context.Context, sessionID string) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadByLinearSession(ctx, sessionID))
	if err != nil {
		return nil, fmt.Errorf("thread by linear session: %w", err)
	}
	return t, nil
}

// ThreadByDiscordThread returns the thread attached to a Discord thread.
func (q *Queries) ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadByDiscordThread(ctx, discordThreadID))
	if err != nil {
		return nil, fmt.Errorf("thread by discord thread: %w", err)
	}
	return t, nil
}

func setStatusParams(id uuid.UUID, c thread.StatusChange) dbsqlc.SetStatusParams {
	sources := thread.SourcesOf(c.To)
	from := make([]string, len(sources))
	for i, st := range sources {
		from[i] = string(st)
	}
	return dbsqlc.SetStatusParams{
		ThreadID:      id,
		Status:        string(c.To),
		WaitingReason: nullString(string(c.WaitingReason)),
		Result:        nullJSON(c.Result),
		Error:         nullString(c.Error),
		Sources:       from,
	}
}

// SetStatus moves a thread to a new status if the status machine allows it
// from the status it is in now; otherwise it fails with a
// *thread.TransitionError (an ErrConflict). The check and the write are one
// statement, so two concurrent changes cannot both pass it.
func (q *Queries) SetStatus(ctx context.Context, id uuid.UUID, c thread.StatusChange) (*thread.Thread, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, err := threadOf(q.gen.SetStatus(ctx, setStatusParams(id, c)))
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
	Platform     thread.Platform // discord, linear, slack or github: threads attached there
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
	arg := dbsqlc.ListThreadsParams{
		Status:       nullString(string(f.Status)),
		ThreadType:   nullString(string(f.Type)),
		Platform:     nullString(string(f.Platform)),
		UpdatedSince: nullTime(f.UpdatedSince),
		AfterUpdated: nullTime(f.AfterUpdated),
		AfterID:      f.AfterID,
		MaxRows:      int32(f.Limit),
	}
	rows, err := q.gen.ListThreads(ctx, arg)
	out, err := mapAll(rows, err, threadOf)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}
