package replies

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// Discord reads Discord threads weft does not track. Its failures are
// *Error values with the codes get-thread-replies answers with; an
// Unavailable one is retried, and any other error is taken for a transient
// one too.
type Discord interface {
	Channel(ctx context.Context, channelID string) (DiscordChannel, error)
	Message(ctx context.Context, channelID, messageID string) (DiscordMessage, error)
	Messages(ctx context.Context, channelID, afterID string, limit int) ([]DiscordMessage, error)
	MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]DiscordMessage, error)
}

// DiscordChannel is a Discord channel, as far as replies reads it.
type DiscordChannel struct {
	IsThread bool
	// ParentID is the channel a thread is in: a thread started from a
	// message has that message's id, and the message lives there.
	ParentID string
}

// DiscordMessage is a message of Discord's REST history.
type DiscordMessage struct {
	ID      string
	Author  threadview.Author
	Content string
	// ReferencedID is the message this one points at, if any.
	ReferencedID string
	CreatedAt    time.Time
	EditedAt     time.Time // zero if never edited
}

// fromDiscord reads a page of a Discord thread: from Postgres when weft
// tracks it (its stored messages know about deletes, and reading them costs
// no rate limit), else from Discord's REST history.
func (s *Service) fromDiscord(ctx context.Context, p page) (*Response, error) {
	th, err := s.store.ThreadByDiscordThread(ctx, p.threadID)
	switch {
	case err == nil:
		return s.fromStore(ctx, th, p, SourceWeft)
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	case s.discord == nil:
		return nil, notFound("weft does not track Discord thread %s, and Discord is not configured", p.threadID)
	}
	ch, err := s.discord.Channel(ctx, p.threadID)
	if err != nil {
		return nil, err
	}
	if !ch.IsThread {
		return nil, invalid("Discord channel %s is not a thread", p.threadID)
	}
	resp := &Response{ThreadID: p.threadID, Source: SourceDiscord, Replies: []Message{}}
	// A thread started from a message has that message's id; the message
	// itself lives in the parent channel. A thread started without one has
	// no parent.
	if ch.ParentID != "" {
		starter, err := s.discord.Message(ctx, ch.ParentID, p.threadID)
		var e *httpapi.Error
		switch {
		case err == nil:
			m := discordMessage(starter)
			resp.Parent = &m
		case !errors.As(err, &e) || e.Code != httpapi.CodeNotFound:
			return nil, err
		}
	}
	var msgs []DiscordMessage
	if p.newest() {
		msgs, err = s.discord.MessagesBefore(ctx, p.threadID, p.pos, p.limit+1)
		slices.Reverse(msgs)
	} else {
		msgs, err = s.discord.Messages(ctx, p.threadID, p.pos, p.limit+1)
	}
	if err != nil {
		return nil, err
	}
	if len(msgs) > p.limit {
		msgs = msgs[:p.limit]
		resp.HasMore = true
		resp.NextCursor = p.next(msgs[len(msgs)-1].ID)
	}
	for _, m := range msgs {
		// Discord puts an empty stub pointing at the starter message first in
		// a thread started from one; the starter is the parent already.
		if m.Content == "" && m.ReferencedID == p.threadID {
			continue
		}
		resp.Replies = append(resp.Replies, discordMessage(m))
	}
	return resp, nil
}

// discordMessage is a message read from Discord's API.
func discordMessage(m DiscordMessage) Message {
	text := m.Content
	author := m.Author
	out := Message{
		TS: timestamp(m.CreatedAt), User: author.ID, ID: m.ID, Author: &author, Text: &text, Subtype: string(thread.StitchDiscordMessage),
		CreatedAt: m.CreatedAt, Edited: !m.EditedAt.IsZero(),
	}
	if out.Edited {
		at := m.EditedAt
		out.EditedAt = &at
	}
	return out
}
