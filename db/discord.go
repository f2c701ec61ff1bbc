package db

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

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
	_, err := q.db.Exec(ctx, `UPDATE discord_thread_metadata SET last_message_id = $2, updated_at = now()
		WHERE discord_thread_id = $1 AND (last_message_id IS NULL
			OR (length($2), $2) > (length(last_message_id), last_message_id))`, discordThreadID, messageID)
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
	rows, err := q.db.Query(ctx, `SELECT `+discordColumns+` FROM discord_thread_metadata
		WHERE is_active AND (length(discord_thread_id), discord_thread_id) > (length($1), $1)
		ORDER BY length(discord_thread_id), discord_thread_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("active discord threads: %w", translate(err))
	}
	out, err := collect(rows, scanDiscord)
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
	var id string
	err := q.db.QueryRow(ctx, `SELECT d.discord_thread_id FROM discord_thread_metadata d
		WHERE d.thread_id = $1 AND d.is_active AND (
			SELECT s.source_platform FROM stitches s
			WHERE s.thread_id = $1 AND s.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity')
			ORDER BY s.seq DESC LIMIT 1) = 'discord'`, threadID).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("discord surface: %w", translate(err))
	}
	return id, nil
}

// ThreadByLinearRef finds the thread of a Linear session named by ref: a
// session id, an issue id, or an issue identifier such as "ENG-123" (any
// case). An issue may have had several sessions; the most recently active
// one's thread is returned. This is how /continue resolves what a user typed.
func (q *Queries) ThreadByLinearRef(ctx context.Context, ref string) (*thread.Thread, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("thread by linear ref: %w", thread.ErrNotFound)
	}
	t, err := scanThread(q.db.QueryRow(ctx, `
		SELECT `+threadColumns+` FROM threads WHERE thread_id = (
			SELECT thread_id FROM linear_thread_metadata
			WHERE session_id = $1 OR issue_id = $1 OR upper(issue_identifier) = upper($1)
			ORDER BY (session_id = $1) DESC, last_activity_at DESC LIMIT 1)`, ref))
	if err != nil {
		if errors.Is(err, thread.ErrNotFound) {
			return nil, fmt.Errorf("thread by linear ref %q: %w", ref, err)
		}
		return nil, fmt.Errorf("thread by linear ref: %w", err)
	}
	return t, nil
}
