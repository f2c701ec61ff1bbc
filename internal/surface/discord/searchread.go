package discord

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// DiscordChannel is a Discord channel or thread as the Discord tools see it.
type DiscordChannel struct {
	ID       string
	GuildID  string // empty for a direct message
	IsThread bool
}

// DiscordReader reads Discord through its API; cmd/weft adapts
// *discord.Client. A missing channel or message fails with an error
// wrapping thread.ErrNotFound.
type DiscordReader interface {
	Channel(ctx context.Context, channelID string) (DiscordChannel, error)
	// MessagesBefore returns the newest limit messages before beforeID (""
	// means the latest), oldest first.
	MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]discovery.ChannelMessage, error)
	// MessagesAfter returns the oldest limit messages after afterID, oldest
	// first.
	MessagesAfter(ctx context.Context, channelID, afterID string, limit int) ([]discovery.ChannelMessage, error)
	Message(ctx context.Context, channelID, messageID string) (discovery.ChannelMessage, error)
	// SearchMembers returns a guild's members whose username or nickname
	// starts with query (Discord's Search Guild Members), at most limit.
	SearchMembers(ctx context.Context, guildID, query string, limit int) ([]DiscordMember, error)
}

// DiscordMember is a guild member: its id and names, best first (the
// guild nickname, the global display name, the username).
type DiscordMember struct {
	ID    string
	Names []string
}

// DiscordArchive is what weft stored of Discord. *db.Store implements it.
type DiscordArchive interface {
	tenancy.Organisations
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	StoredDiscordMessages(ctx context.Context, q db.DiscordMessageQuery) ([]db.DiscordMessage, error)
	StoredDiscordMessage(ctx context.Context, messageID string) (*db.DiscordMessage, error)
}

var _ DiscordArchive = (*db.Store)(nil)

// Limits of the Discord tools. Discord has no search API, so each call
// fetches messages and filters them here; 100 is one page, and the most a
// call scans. Text is cut at 300 characters so a result stays readable.
const (
	maxScan = 100
	maxText = 300
	// maxToday is what get_channel_summary reads for "today", as the
	// origin's timeframe_to_limit says.
	maxToday = 200
)

// source is what a call reads: a tracked thread in Postgres, or a channel
// or thread through the API.
type source struct {
	id       string
	guildID  string
	stored   bool
	isThread bool
}

// attachment is the conversation's Discord thread; nil outside Discord.
func (s *DiscordSearch) attachment(ctx context.Context, c tools.Call) (*thread.DiscordAttachment, error) {
	att, err := s.Store.DiscordAttachment(ctx, c.ThreadID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the conversation's Discord thread: %w", err)
	}
	return att, nil
}

// target names what a call reads: named, else the conversation's Discord
// thread (wantThread) or the channel that thread is in.
func (s *DiscordSearch) target(ctx context.Context, c tools.Call, named string, wantThread bool) (string, error) {
	att, err := s.attachment(ctx, c)
	switch {
	case err != nil:
		return "", err
	case named != "":
		return named, nil
	case att == nil && wantThread:
		return "", errors.New("this conversation is not in a Discord thread: name a thread_id")
	case att == nil:
		return "", errors.New("this conversation is not in Discord: name a channel_id")
	case wantThread:
		return att.DiscordThreadID, nil
	}
	return att.ChannelID, nil
}

// open decides how to read id. A tracked thread comes from Postgres when
// useStore allows; anything else must exist on Discord, be in a server (not
// a DM) and be in a server the conversation may read.
func (s *DiscordSearch) open(ctx context.Context, c tools.Call, id string, useStore bool) (source, error) {
	if !thread.IsSnowflake(id) {
		return source{}, fmt.Errorf("%q is not a Discord channel id", id)
	}
	if useStore {
		th, err := s.Store.ThreadByDiscordThread(ctx, id)
		if err == nil {
			tracked, err := s.Store.DiscordAttachment(ctx, th.ID)
			if err != nil {
				return source{}, fmt.Errorf("read Discord thread %s: %w", id, err)
			}
			if err := s.allowed(ctx, c, tracked.GuildID); err != nil {
				return source{}, fmt.Errorf("channel %s: %w", id, err)
			}
			return source{id: id, guildID: tracked.GuildID, stored: true, isThread: true}, nil
		}
		if !errors.Is(err, thread.ErrNotFound) {
			return source{}, fmt.Errorf("read Discord thread %s: %w", id, err)
		}
	}
	ch, err := s.Reader.Channel(ctx, id)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return source{}, fmt.Errorf("discord channel %s was not found, or weft cannot see it", id)
	case err != nil:
		return source{}, fmt.Errorf("read Discord channel %s: %w", id, err)
	case ch.GuildID == "":
		return source{}, fmt.Errorf("channel %s is a direct message: the Discord search tools work only in server channels", id)
	}
	if err := s.allowed(ctx, c, ch.GuildID); err != nil {
		return source{}, fmt.Errorf("channel %s: %w", id, err)
	}
	return source{id: id, guildID: ch.GuildID, isThread: ch.IsThread}, nil
}

// errOtherServer refuses a server outside the conversation's organisation
// or outside DISCORD_ALLOWED_GUILDS.
var errOtherServer = errors.New("it is in a Discord server of another organisation than this conversation")

// allowed checks the conversation of c may read guildID: an allowed server
// of the conversation's organisation, or any allowed server for the
// operator's conversations (on no platform).
func (s *DiscordSearch) allowed(ctx context.Context, c tools.Call, guildID string) error {
	if len(s.Guilds) > 0 && !slices.Contains(s.Guilds, guildID) {
		return errOtherServer
	}
	_, mine, err := s.Store.ThreadTenant(ctx, c.ThreadID)
	if err != nil || mine == "" {
		return err
	}
	theirs, err := s.Store.Organisation(ctx, thread.DiscordTenant(guildID))
	if err != nil {
		return err
	}
	if theirs != mine {
		return errOtherServer
	}
	return nil
}

// newest returns up to n of src's latest messages, newest first (the order
// the origin's channel.history yields), without deleted ones. author, when
// set, narrows a stored read in SQL; callers still filter with user.match.
func (s *DiscordSearch) newest(ctx context.Context, src source, n int, author user) ([]discovery.ChannelMessage, error) {
	if !src.stored {
		msgs, err := s.Reader.MessagesBefore(ctx, src.id, "", n)
		if err != nil {
			return nil, fmt.Errorf("read Discord channel %s: %w", src.id, err)
		}
		slices.Reverse(msgs)
		return msgs, nil
	}
	return s.stored(ctx, db.DiscordMessageQuery{DiscordThreadID: src.id, AuthorID: author.id, AuthorName: author.name, Limit: n})
}

// stored reads stored messages in the query's order, without deleted ones:
// the API never returns those either, so both paths answer alike.
func (s *DiscordSearch) stored(ctx context.Context, q db.DiscordMessageQuery) ([]discovery.ChannelMessage, error) {
	q.Live = true
	rows, err := s.Store.StoredDiscordMessages(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read stored Discord messages: %w", err)
	}
	out := make([]discovery.ChannelMessage, len(rows))
	for i, m := range rows {
		out[i] = fromStored(m)
	}
	return out, nil
}

func fromStored(m db.DiscordMessage) discovery.ChannelMessage {
	at := thread.SnowflakeTime(m.ID)
	if at.IsZero() {
		at = m.StoredAt
	}
	return discovery.ChannelMessage{ID: m.ID, AuthorID: m.Author.ID, Author: m.Author.Name, Bot: m.Author.Bot,
		Text: m.Content, At: at, Edited: !m.EditedAt.IsZero()}
}

// format renders a message as the origin does, "[5 minutes ago] Name
// (Bot): text", on one line, its text cut at 300 characters; an edited
// message says so in the brackets.
func (s *DiscordSearch) format(m discovery.ChannelMessage) string {
	when := relativeTime(s.now().Sub(m.At))
	if m.Edited {
		when += ", edited"
	}
	bot := ""
	if m.Bot {
		bot = " (Bot)"
	}
	return fmt.Sprintf("[%s] %s%s: %s", when, history.OrUnknown(m.Author), bot, discovery.Clip(m.Text, maxText))
}

func relativeTime(d time.Duration) string {
	unit := func(n int, name string) string {
		if n == 1 {
			return "1 " + name + " ago"
		}
		return strconv.Itoa(n) + " " + name + "s ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int(d/time.Hour), "hour")
	}
	return unit(int(d/(24*time.Hour)), "day")
}

// keywordMatch is the origin's match: a case-insensitive substring. An empty
// query matches everything.
func keywordMatch(text, query string) bool {
	return strings.Contains(strings.ToLower(text), strings.ToLower(strings.TrimSpace(query)))
}

// user is who search_user_messages looks for: an id (a mention or a bare
// snowflake) or part of a display name.
type user struct{ id, name string }

var mentionRE = regexp.MustCompile(`^<@!?(\d+)>$`)

func parseUser(s string) user {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "@"))
	if m := mentionRE.FindStringSubmatch(s); m != nil {
		return user{id: m[1]}
	}
	if thread.IsSnowflake(s) {
		return user{id: s}
	}
	return user{name: s}
}

func (u user) match(m discovery.ChannelMessage) bool {
	if u.id != "" {
		return m.AuthorID == u.id
	}
	return keywordMatch(m.Author, u.name)
}

// memberMatches is how many members a name search asks Discord for.
const memberMatches = 10

// member finds the guild member a name means, as the origin's
// find_user_by_name does over guild.members: Discord's member search (by
// the start of a username or nickname), then the one whose name is the
// name asked, else the first that contains it. ok is false when no member
// matches or the search failed (the caller then looks among the
// messages' authors).
func (s *DiscordSearch) member(ctx context.Context, guildID, name string) (user, bool) {
	name = strings.TrimSpace(name)
	if guildID == "" || name == "" {
		return user{}, false
	}
	ms, err := s.Reader.SearchMembers(ctx, guildID, name, memberMatches)
	if err != nil || len(ms) == 0 {
		return user{}, false
	}
	for _, m := range ms {
		if slices.ContainsFunc(m.Names, func(n string) bool { return strings.EqualFold(n, name) }) {
			return user{id: m.ID, name: m.Names[0]}, true
		}
	}
	for _, m := range ms {
		if slices.ContainsFunc(m.Names, func(n string) bool { return keywordMatch(n, name) }) {
			return user{id: m.ID, name: m.Names[0]}, true
		}
	}
	return user{}, false
}

// count applies a tool's default and the scan cap to a requested number.
func count(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}
