package db

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

// MaxDiscordMessages bounds one read of stored Discord messages: the search
// tools scan at most 100 messages per call, Discord's own page size.
const MaxDiscordMessages = 100

// DiscordMessageQuery selects stored messages of tracked Discord threads.
// One of DiscordThreadID and ChannelID is required; the other filters are
// optional and combine.
type DiscordMessageQuery struct {
	DiscordThreadID string // the messages of one tracked Discord thread
	ChannelID       string // the messages of every tracked thread in a channel
	AuthorID        string // only this author's messages
	AuthorName      string // only authors whose name contains this, in any case
	// Before and After are message ids, exclusive bounds. Results come
	// newest first, except with After: then the oldest messages after it,
	// oldest first. Either way they are the ones nearest the cursor.
	Before string
	After  string
	// Live leaves deleted messages out, so that a limit counts only
	// messages people can still see; otherwise they come flagged.
	Live  bool
	Limit int // 1 to MaxDiscordMessages; 0 means MaxDiscordMessages
}

// DiscordMessage is a person's message in a tracked Discord thread, as weft
// stored it: a discord_message stitch, or the mention that opened the
// thread (its initial prompt). The bot's own answers are llm_call stitches
// and are not among them.
type DiscordMessage struct {
	ID              string // the Discord message id
	ThreadID        uuid.UUID
	DiscordThreadID string
	ChannelID       string // the channel the Discord thread is in
	GuildID         string
	Author          thread.Author
	Content         string
	EditedAt        time.Time // zero unless edited
	DeletedAt       time.Time // zero unless deleted; the text is kept
	StoredAt        time.Time
}

// discordMessageSelect reads DiscordMessage rows. Only stitches that came
// from Discord messages qualify; ids are snowflakes (a CHECK constraint), so
// ordering by (length, text) is numeric order.
const discordMessageSelect = `SELECT s.external_id, s.thread_id, d.discord_thread_id, d.channel_id, d.guild_id,
	s.author_id, s.author_name, s.author_is_bot, s.content, s.edited_at, s.deleted_at, s.created_at
	FROM discord_thread_metadata d JOIN stitches s ON s.thread_id = d.thread_id
	WHERE s.source_platform = 'discord' AND s.external_id IS NOT NULL
		AND s.stitch_type IN ('discord_message', 'initial_prompt')`

// StoredDiscordMessages reads stored messages of tracked Discord threads
// (see DiscordMessageQuery for order and bounds), deleted ones flagged
// unless Live leaves them out. This is how the Discord search tools read a tracked thread
// without asking Discord.
func (q *Queries) StoredDiscordMessages(ctx context.Context, dq DiscordMessageQuery) ([]DiscordMessage, error) {
	if dq.DiscordThreadID == "" && dq.ChannelID == "" {
		return nil, fmt.Errorf("stored discord messages: %w", &thread.Error{Kind: thread.ErrInvalid, Msg: "a Discord thread or channel id is required"})
	}
	for _, id := range []string{dq.DiscordThreadID, dq.ChannelID, dq.Before, dq.After} {
		if id != "" && !thread.IsSnowflake(id) {
			return nil, fmt.Errorf("stored discord messages: %w", thread.ErrInvalidSnowflake)
		}
	}
	if dq.Limit <= 0 || dq.Limit > MaxDiscordMessages {
		dq.Limit = MaxDiscordMessages
	}
	// Only the filters in use go into the statement, so each shape gets a
	// plan that uses its index; "$1 = '' OR ..." would defeat it under
	// pgx's cached generic plans.
	var where strings.Builder
	var args []any
	add := func(cond, arg string) {
		if arg != "" {
			args = append(args, arg)
			fmt.Fprintf(&where, " AND "+cond, len(args))
		}
	}
	add("d.discord_thread_id = $%d", dq.DiscordThreadID)
	add("d.channel_id = $%d", dq.ChannelID)
	add("s.author_id = $%d", dq.AuthorID)
	add("s.author_name ILIKE '%%' || $%d || '%%'", likeEscape(dq.AuthorName))
	add("(length(s.external_id), s.external_id) < (length($%[1]d), $%[1]d)", dq.Before)
	add("(length(s.external_id), s.external_id) > (length($%[1]d), $%[1]d)", dq.After)
	if dq.Live {
		where.WriteString(" AND s.deleted_at IS NULL")
	}
	order := ` ORDER BY length(s.external_id) DESC, s.external_id DESC`
	if dq.After != "" {
		order = ` ORDER BY length(s.external_id), s.external_id`
	}
	args = append(args, dq.Limit)
	rows, err := q.db.Query(ctx, discordMessageSelect+where.String()+order+fmt.Sprintf(" LIMIT $%d", len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("stored discord messages: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, scanDiscordMessage)
	if err != nil {
		return nil, fmt.Errorf("stored discord messages: %w", translate(err))
	}
	return out, nil
}

// StoredDiscordMessage reads one stored message of a tracked Discord thread
// by its message id; a message weft did not store fails with
// thread.ErrNotFound.
func (q *Queries) StoredDiscordMessage(ctx context.Context, messageID string) (*DiscordMessage, error) {
	rows, err := q.db.Query(ctx, discordMessageSelect+` AND s.external_id = $1`, messageID)
	if err != nil {
		return nil, fmt.Errorf("stored discord message: %w", translate(err))
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanDiscordMessage)
	if err != nil {
		return nil, fmt.Errorf("stored discord message %s: %w", messageID, translate(err))
	}
	return &m, nil
}

func scanDiscordMessage(row pgx.CollectableRow) (DiscordMessage, error) {
	var (
		m                    DiscordMessage
		authorID, authorName pgtype.Text
		content              pgtype.Text
		bot                  pgtype.Bool
		edited, deleted      pgtype.Timestamptz
	)
	err := row.Scan(&m.ID, &m.ThreadID, &m.DiscordThreadID, &m.ChannelID, &m.GuildID,
		&authorID, &authorName, &bot, &content, &edited, &deleted, &m.StoredAt)
	if err != nil {
		return m, err
	}
	m.Author = thread.Author{ID: str(authorID), Name: str(authorName), Bot: bot.Bool}
	m.Content, m.EditedAt, m.DeletedAt = str(content), tm(edited), tm(deleted)
	return m, nil
}

// likeEscape makes s match literally inside an ILIKE pattern: a name
// searched for "a_b" or "100%" must not act as a wildcard.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
