package discord

import (
	"context"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Sink receives gateway events, converted and filtered: no messages by bots
// (weft's own included), nothing from guilds outside Config.AllowedGuilds.
// Calls for one channel or thread come one at a time in gateway order; calls
// for different channels may run concurrently. Each call has Config's
// SinkTimeout; an error is logged, and the event is not redelivered: the
// backfill after a reconnect is the recovery path, so implementations must be
// idempotent (events can also repeat, per Discord's delivery rules).
type Sink interface {
	// MessageCreated is a new message by a person.
	MessageCreated(ctx context.Context, m Message) error
	// MessageUpdated is an edit; m carries the new content and EditedAt,
	// never zero. Updates that are not edits do not reach the Sink.
	MessageUpdated(ctx context.Context, m Message) error
	// MessageDeleted is a deletion; Discord sends only the ids, so the
	// content must come from weft's own records.
	MessageDeleted(ctx context.Context, channelID, messageID string) error
	// ThreadUpdated is a thread's new state; archived or deleted threads are
	// not Active.
	ThreadUpdated(ctx context.Context, t Thread) error
	// Connected follows every READY and RESUMED: events may have been missed
	// while disconnected (a resume that fails identifies anew, and a new
	// session replays nothing), so this is the cue to backfill tracked
	// threads with Messages after their last recorded id.
	Connected(ctx context.Context) error
}

// connectionKey is the dispatcher lane of Connected calls, apart from every
// channel so a long backfill does not hold up live messages.
const connectionKey = ""

// addHandlers registers the gateway handlers. They run on the read loop
// (SyncEvents), so they only filter and enqueue.
func (c *Client) addHandlers() {
	s := c.session
	s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		c.logger.Info("discord gateway ready", slog.Int("guilds", len(r.Guilds)))
		c.events.enqueue(connectionKey, c.connected())
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) {
		c.logger.Info("discord gateway resumed")
		c.events.enqueue(connectionKey, c.connected())
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Connect) {
		// An Open of the reconnect loop already under way when Stop was
		// called may still connect; close what it opens. Connect fires
		// inside Open under the session lock, hence the goroutine.
		if c.closing.Load() {
			go s.Close()
		}
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		c.logger.Info("discord gateway disconnected")
		// Disconnect fires inside discordgo's Close, which a failed read or
		// heartbeat calls and then returns; Stop's own Close sets closing.
		if !c.closing.Load() {
			go c.reconnect()
		}
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) {
		c.onMessage(e.Message, "message created", c.sink.MessageCreated)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageUpdate) {
		// Discord sends the whole message on every update (a link preview,
		// the thread opened on it); only one with an edit time is an edit.
		if e.Message == nil || e.EditedTimestamp == nil {
			return
		}
		c.onMessage(e.Message, "message updated", c.sink.MessageUpdated)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageDelete) {
		c.onDelete(e.GuildID, e.ChannelID, e.ID)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageDeleteBulk) {
		for _, id := range e.Messages {
			c.onDelete(e.GuildID, e.ChannelID, id)
		}
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadUpdate) {
		c.onThread(e.Channel, false)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadDelete) {
		c.onThread(e.Channel, true)
	})
}

// onMessage filters a created or updated message and queues it for the Sink.
func (c *Client) onMessage(m *discordgo.Message, event string, call func(context.Context, Message) error) {
	if m == nil || !c.allowedGuild(m.GuildID) {
		return
	}
	// An update without an author is Discord filling in embeds, not an edit.
	if m.Author == nil || m.Author.Bot {
		return
	}
	bot := c.botUserID()
	if m.Author.ID == bot {
		return
	}
	c.events.enqueue(m.ChannelID, c.deliver(event, func(ctx context.Context) error {
		// Thread placement may need a REST lookup, so it runs in the lane,
		// not on the gateway loop.
		// Urgent: the whole lane waits on it, a new conversation included.
		where, err := c.channelInfo(WithPriority(ctx, PriorityUrgent), m.ChannelID)
		if err != nil {
			return err
		}
		return call(ctx, convertMessage(m, bot, where))
	}))
}

// onDelete queues a deletion for the Sink.
func (c *Client) onDelete(guildID, channelID, messageID string) {
	if !c.allowedGuild(guildID) {
		return
	}
	c.events.enqueue(channelID, c.deliver("message deleted", func(ctx context.Context) error {
		return c.sink.MessageDeleted(ctx, channelID, messageID)
	}))
}

// onThread queues a thread's new state for the Sink.
func (c *Client) onThread(ch *discordgo.Channel, deleted bool) {
	if ch == nil || !c.allowedGuild(ch.GuildID) {
		return
	}
	t := Thread{ID: ch.ID, GuildID: ch.GuildID, ParentID: ch.ParentID, Name: ch.Name, Deleted: deleted}
	if ch.ThreadMetadata != nil {
		t.Archived, t.Locked = ch.ThreadMetadata.Archived, ch.ThreadMetadata.Locked
	}
	c.events.enqueue(ch.ID, c.deliver("thread updated", func(ctx context.Context) error {
		return c.sink.ThreadUpdated(ctx, t)
	}))
}

// allowedGuild applies Config.AllowedGuilds, failing closed: when a list is
// set, a missing guild id (a DM) is not on it.
func (c *Client) allowedGuild(guildID string) bool {
	return c.allowed == nil || c.allowed[guildID]
}

// connectedTimeout bounds a Connected call: a backfill of every tracked
// thread reads one history per thread, far more than one event's
// SinkTimeout. It runs in its own lane, so live events do not wait on it.
const connectedTimeout = 5 * time.Minute

// connected is the Sink's Connected call, with its own timeout.
func (c *Client) connected() func(context.Context) {
	return c.deliverWithin("connected", connectedTimeout, c.sink.Connected)
}

// deliver wraps a Sink call with its timeout and error log.
func (c *Client) deliver(event string, call func(context.Context) error) func(context.Context) {
	return c.deliverWithin(event, c.sinkTimeout, call)
}

// deliverWithin wraps a Sink call with the given timeout and error log.
func (c *Client) deliverWithin(event string, timeout time.Duration, call func(context.Context) error) func(context.Context) {
	return func(parent context.Context) {
		ctx, cancel := context.WithTimeout(parent, timeout)
		defer cancel()
		ctx = context.WithValue(ctx, laterKey{}, c)
		if err := call(ctx); err != nil {
			c.logger.ErrorContext(ctx, "discord sink failed", slog.String("event", event), slog.Any("error", err))
		}
	}
}

// laterKey carries, in a Sink call's context, the Client whose dispatcher
// runs it, so that the Sink can queue more work on another lane.
type laterKey struct{}

// later queues call as a Sink call of its own on key's lane, with its own
// timeout, so that the lane ctx's call runs in goes on without waiting for
// it. Without a dispatcher (a Sink called directly) it runs call now.
func later(ctx context.Context, key, event string, call func(context.Context) error) error {
	if c, ok := ctx.Value(laterKey{}).(*Client); ok {
		c.events.enqueue(key, c.deliver(event, call))
		return nil
	}
	return call(ctx)
}
