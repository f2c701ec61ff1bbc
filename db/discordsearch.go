package db

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
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

// DiscordMessage is a message in a tracked Discord thread, as weft stored
// it: a person's (a discord_message stitch, or the mention that opened the
// thread, its initial prompt), or the bot's own reply (an outbox row sent
// there: Author is "weft", a bot, without an id).
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
	arg := dbsqlc.StoredDiscordMessagesNewestParams{
		DiscordThreadID: nullString(dq.DiscordThreadID),
		ChannelID:       nullString(dq.ChannelID),
		AuthorID:        nullString(dq.AuthorID),
		AuthorName:      nullString(escapeLike(dq.AuthorName)),
		Before:          nullString(dq.Before),
		Live:            dq.Live,
		MaxRows:         int32(dq.Limit),
	}
	var rows []dbsqlc.StoredDiscordMessagesNewestRow
	var err error
	if dq.After != "" {
		var after []dbsqlc.StoredDiscordMessagesAfterRow
		after, err = q.gen.StoredDiscordMessagesAfter(ctx, dbsqlc.StoredDiscordMessagesAfterParams{
			DiscordThreadID: arg.DiscordThreadID, ChannelID: arg.ChannelID, AuthorID: arg.AuthorID,
			AuthorName: arg.AuthorName, Before: arg.Before, After: dq.After, Live: arg.Live, MaxRows: arg.MaxRows,
		})
		for _, r := range after {
			rows = append(rows, dbsqlc.StoredDiscordMessagesNewestRow(r))
		}
	} else {
		rows, err = q.gen.StoredDiscordMessagesNewest(ctx, arg)
	}
	out, err := mapAll(rows, err, discordMessageOf)
	if err != nil {
		return nil, fmt.Errorf("stored discord messages: %w", err)
	}
	return out, nil
}

// StoredDiscordMessage reads one stored message of a tracked Discord thread
// by its message id; a message weft did not store fails with
// thread.ErrNotFound.
func (q *Queries) StoredDiscordMessage(ctx context.Context, messageID string) (*DiscordMessage, error) {
	r, err := q.gen.StoredDiscordMessage(ctx, messageID)
	m, err := discordMessageOf(dbsqlc.StoredDiscordMessagesNewestRow(r), err)
	if err != nil {
		return nil, fmt.Errorf("stored discord message %s: %w", messageID, err)
	}
	return m, nil
}

func discordMessageOf(r dbsqlc.StoredDiscordMessagesNewestRow, err error) (*DiscordMessage, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &DiscordMessage{
		ID:              r.MessageID,
		ThreadID:        r.ThreadID,
		DiscordThreadID: r.DiscordThreadID,
		ChannelID:       r.ChannelID,
		GuildID:         r.GuildID,
		Author:          thread.Author{ID: str(r.AuthorID), Name: str(r.AuthorName), Bot: r.AuthorIsBot != nil && *r.AuthorIsBot},
		Content:         str(r.Content),
		EditedAt:        tm(r.EditedAt),
		DeletedAt:       tm(r.DeletedAt),
		StoredAt:        r.CreatedAt,
	}, nil
}
