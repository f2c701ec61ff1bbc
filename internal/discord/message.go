package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/thread"
)

// Author is who wrote a message.
type Author struct {
	ID   string
	Name string // guild nickname, else global display name, else username
	Bot  bool
}

// Message is a Discord message as weft records it.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string // empty in DMs
	Author    Author
	Content   string
	Timestamp time.Time
	EditedAt  time.Time // zero if never edited
	// MentionsBot reports a direct mention of weft's bot user. It is known
	// only once the gateway is connected (the bot's id comes with READY).
	MentionsBot bool
	// InThread reports that ChannelID is a thread; ParentChannelID is then
	// the channel the thread belongs to.
	InThread        bool
	ParentChannelID string
	// ReferencedMessageID is the message this one replies to, or for a
	// thread's starter message the parent-channel message it points at.
	ReferencedMessageID string
	// System reports a message Discord posts itself (a thread renamed, a
	// member added, a pin), under the name of whoever caused it: not that
	// person's words.
	System bool
	// Files are the message's attachments (on Discord's CDN).
	Files []thread.File
}

// Channel is a channel or thread as far as weft cares.
type Channel struct {
	ID       string
	GuildID  string
	ParentID string // for a thread, its channel
	Name     string
	IsThread bool
	Archived bool
	Locked   bool
}

// Thread is the state of a thread after a THREAD_UPDATE or THREAD_DELETE.
type Thread struct {
	ID       string
	GuildID  string
	ParentID string
	Name     string
	Archived bool
	Locked   bool
	Deleted  bool
}

// Active reports whether weft should keep treating the thread as live:
// archived and deleted threads are inactive.
func (t Thread) Active() bool { return !t.Archived && !t.Deleted }

// convertMessage maps a discordgo message; where tells thread placement.
func convertMessage(m *discordgo.Message, botID string, where channelInfo) Message {
	out := Message{
		ID:              m.ID,
		ChannelID:       m.ChannelID,
		GuildID:         m.GuildID,
		Content:         m.Content,
		Timestamp:       m.Timestamp,
		InThread:        where.isThread,
		ParentChannelID: where.parentID,
		System:          m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply,
	}
	if out.GuildID == "" {
		out.GuildID = where.guildID
	}
	if m.EditedTimestamp != nil {
		out.EditedAt = *m.EditedTimestamp
	}
	if m.Author != nil {
		out.Author = Author{ID: m.Author.ID, Name: displayName(m), Bot: m.Author.Bot}
	}
	if m.MessageReference != nil {
		out.ReferencedMessageID = m.MessageReference.MessageID
	}
	for _, a := range m.Attachments {
		if a != nil {
			out.Files = append(out.Files, thread.File{Name: a.Filename, MediaType: a.ContentType, Size: int64(a.Size), URL: a.URL})
		}
	}
	if botID != "" {
		for _, u := range m.Mentions {
			if u != nil && u.ID == botID {
				out.MentionsBot = true
				break
			}
		}
	}
	return out
}

// displayName picks the name people see for the author.
func displayName(m *discordgo.Message) string {
	if m.Member != nil && m.Member.Nick != "" {
		return m.Member.Nick
	}
	if m.Author.GlobalName != "" {
		return m.Author.GlobalName
	}
	return m.Author.Username
}

// convertChannel maps a discordgo channel.
func convertChannel(ch *discordgo.Channel) Channel {
	out := Channel{ID: ch.ID, GuildID: ch.GuildID, ParentID: ch.ParentID, Name: ch.Name, IsThread: ch.IsThread()}
	if ch.ThreadMetadata != nil {
		out.Archived, out.Locked = ch.ThreadMetadata.Archived, ch.ThreadMetadata.Locked
	}
	return out
}

// channelInfo is what never changes about a channel: whether it is a thread,
// its parent and its guild. That makes it safe to cache without expiry.
type channelInfo struct {
	isThread bool
	parentID string
	guildID  string
}

// maxCachedChannels bounds the cache; it is simply emptied when full, since
// refilling costs one REST call per channel.
const maxCachedChannels = 10_000

// channelCache remembers channelInfo for channels discordgo's State does not
// hold: State only learns guild channels from GUILD_CREATE and cannot add a
// channel fetched over REST without its guild.
type channelCache struct {
	mu    sync.Mutex
	infos map[string]channelInfo
}

func (cc *channelCache) get(id string) (channelInfo, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	info, ok := cc.infos[id]
	return info, ok
}

func (cc *channelCache) put(id string, info channelInfo) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.infos == nil || len(cc.infos) >= maxCachedChannels {
		cc.infos = make(map[string]channelInfo)
	}
	cc.infos[id] = info
}

// channelInfo looks a channel up in State, then the cache, then REST.
func (c *Client) channelInfo(ctx context.Context, id string) (channelInfo, error) {
	if ch, err := c.session.State.Channel(id); err == nil {
		return channelInfo{isThread: ch.IsThread(), parentID: ch.ParentID, guildID: ch.GuildID}, nil
	}
	if info, ok := c.channels.get(id); ok {
		return info, nil
	}
	ch, err := c.Channel(ctx, id)
	if err != nil {
		return channelInfo{}, err
	}
	info := channelInfo{isThread: ch.IsThread, parentID: ch.ParentID, guildID: ch.GuildID}
	c.channels.put(id, info)
	return info, nil
}

// BotUserID is the bot's user id once READY has arrived, else "".
func (c *Client) BotUserID() string { return c.botUserID() }

// botUserID is the bot's user id once READY has arrived, else "".
func (c *Client) botUserID() string {
	c.session.State.RLock()
	defer c.session.State.RUnlock()
	if c.session.State.User == nil {
		return ""
	}
	return c.session.State.User.ID
}
