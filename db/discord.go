package db

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// SetDiscordLastMessage records messageID as the newest message stored for
// a Discord thread, where the next backfill starts. It only ever moves
// forward: snowflakes compare by length, then text (never as plain text), so
// an older message stored late, out of order, leaves the cursor alone.
func (q *Queries) SetDiscordLastMessage(ctx context.Context, discordThreadID, messageID string) error {
	if !thread.IsSnowflake(messageID) {
		return fmt.Errorf("set discord last message: %w", thread.ErrInvalidSnowflake)
	}
	err := q.gen.SetDiscordLastMessage(ctx, dbsqlc.SetDiscordLastMessageParams{
		DiscordThreadID: discordThreadID, MessageID: messageID,
	})
	if err != nil {
		return fmt.Errorf("set discord last message: %w", translate(err))
	}
	return nil
}

// MaxActiveDiscordThreads bounds one listing of active Discord threads.
const MaxActiveDiscordThreads = 1000

// ActiveDiscordThreads lists active Discord attachments, least recently
// updated first, after the Discord thread id after ("" from the start): the
// threads a gateway backfills after a reconnect. Call again with the last id
// returned until fewer than limit come back.
func (q *Queries) ActiveDiscordThreads(ctx context.Context, after string, limit int) ([]thread.DiscordAttachment, error) {
	if limit <= 0 || limit > MaxActiveDiscordThreads {
		limit = MaxActiveDiscordThreads
	}
	rows, err := q.gen.ActiveDiscordThreads(ctx, dbsqlc.ActiveDiscordThreadsParams{After: after, MaxRows: int32(limit)})
	out, err := mapAll(rows, err, discordOf)
	if err != nil {
		return nil, fmt.Errorf("active discord threads: %w", err)
	}
	return out, nil
}

// DiscordSurface returns the Discord thread a thread answers in now: its
// active attachment, when the thread's newest input came from Discord.
// Otherwise it fails with thread.ErrNotFound. The typing indicator asks it
// as a turn starts.
func (q *Queries) DiscordSurface(ctx context.Context, threadID uuid.UUID) (string, error) {
	id, err := q.gen.DiscordSurface(ctx, threadID)
	if err != nil {
		return "", fmt.Errorf("discord surface: %w", translate(err))
	}
	return id, nil
}

// ThreadByLinearRef finds the thread of a Linear session named by ref: a
// session id, an issue id, or an issue identifier such as "ENG-123" (any
// case). An issue may have had several sessions; the most recently active
// one's thread is returned. Only sessions of workspaces in organisation are
// looked at: this is how /continue resolves what a user typed, and it must
// not find another organisation's conversation.
func (q *Queries) ThreadByLinearRef(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("thread by linear ref: %w", thread.ErrNotFound)
	}
	t, err := threadOf(q.gen.ThreadByLinearRef(ctx, dbsqlc.ThreadByLinearRefParams{Ref: ref, Organisation: organisation}))
	if err != nil {
		if errors.Is(err, thread.ErrNotFound) {
			return nil, fmt.Errorf("thread by linear ref %q: %w", ref, err)
		}
		return nil, fmt.Errorf("thread by linear ref: %w", err)
	}
	return t, nil
}
