package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Recorder is weft's ingest path, in the domain's terms: what gateway
// events become. *ingest.Ingester implements it; this package may not import
// ingest, so the Sink depends on this instead.
type Recorder interface {
	// DiscordConversation starts a thread from a mention once its Discord
	// thread exists; false means the mention was ingested before.
	DiscordConversation(ctx context.Context, att thread.DiscordAttachment, prompt thread.Stitch) (bool, error)
	// DiscordMessages stores new messages of a tracked Discord thread and
	// enqueues one turn for them; an untracked thread fails with
	// thread.ErrNotFound.
	DiscordMessages(ctx context.Context, discordThreadID string, msgs []thread.Stitch, seenThrough string) (int, error)
	DiscordEdited(ctx context.Context, messageID, content string, at time.Time) error
	DiscordDeleted(ctx context.Context, messageID string, at time.Time) error
	DiscordThreadActive(ctx context.Context, discordThreadID string, active bool) error
	ActiveDiscordThreads(ctx context.Context) ([]thread.DiscordAttachment, error)
	// DiscordTail is the newest n messages stored for a tracked Discord
	// thread, deleted ones included, in any order: what a reconnect's
	// backfill compares with Discord's to find edits and deletes it missed.
	DiscordTail(ctx context.Context, discordThreadID string, n int) ([]thread.Stitch, error)
}

// Conversations is the Sink of one gateway shard: a mention of the bot in a
// channel opens a public Discord thread on that message and a weft thread
// with it; every message people post in a tracked thread goes to that weft
// thread; edits, deletes and archiving update what weft stored; and after
// each (re)connect, tracked threads are backfilled from their REST history.
type Conversations struct {
	rest       *Client
	rec        Recorder
	shardID    int
	shardCount int
	logger     *slog.Logger

	mu   sync.Mutex
	open map[string]chan struct{} // threads being opened; see opening
}

var _ Sink = (*Conversations)(nil)

// ConversationsDeps is what Conversations are built from.
type ConversationsDeps struct {
	// REST makes the REST calls (threads, history).
	REST     *Client
	Recorder Recorder
	// ShardID of ShardCount is the gateway shard the Sink serves.
	ShardID, ShardCount int
	Logger              *slog.Logger
}

// NewConversations returns the Sink for one gateway shard.
func NewConversations(d ConversationsDeps) *Conversations {
	return &Conversations{rest: d.REST, rec: d.Recorder, shardID: d.ShardID, shardCount: max(d.ShardCount, 1), open: make(map[string]chan struct{}),
		logger: d.Logger.With("component", "discord_conversations", "shard_id", d.ShardID)}
}

// MessageCreated implements Sink.
func (c *Conversations) MessageCreated(ctx context.Context, m Message) error {
	if !m.InThread {
		if !m.MentionsBot || m.GuildID == "" {
			return nil // weft answers mentions, and opens threads only in guilds
		}
		return c.startConversation(ctx, m)
	}
	s, ok := stitchOf(m)
	if !ok {
		return nil
	}
	if err := c.awaitOpening(ctx, m.ChannelID); err != nil {
		return err
	}
	// A live message leaves the backfill cursor where it is: one stored
	// after another that failed must not carry it past that one, which
	// the next reconnect's backfill is there to recover.
	_, err := c.rec.DiscordMessages(ctx, m.ChannelID, []thread.Stitch{s}, "")
	if errors.Is(err, thread.ErrNotFound) {
		return nil // a thread weft is not part of
	}
	return err
}

// startConversation opens a public thread on the mention and the weft
// thread attached to it. The Discord thread comes first: its id is known
// (it equals the message's), but a turn must not answer into a thread that
// does not exist yet. A redelivered mention finds the thread already
// created and is then deduplicated by the ledger.
func (c *Conversations) startConversation(ctx context.Context, m Message) error {
	name := withoutMentions(m.Content)
	if name == "" {
		name = "Conversation with " + m.Author.Name
	}
	name, err := threadName(name)
	if err != nil {
		return err
	}
	prompt := promptOf(m.Content)
	defer c.opening(m.ID)()
	threadID, err := c.rest.StartThread(ctx, m.ChannelID, m.ID, name)
	var de *surface.Error
	switch {
	case errors.As(err, &de) && de.Code == codeThreadAlreadyCreated:
		threadID = m.ID
	case err != nil:
		return fmt.Errorf("discord: start conversation: %w", err)
	}
	att := thread.DiscordAttachment{
		DiscordThreadID: threadID, ChannelID: m.ChannelID, GuildID: m.GuildID,
		CreatedBy: m.Author.ID, ThreadName: name,
	}
	created, err := c.rec.DiscordConversation(ctx, att, thread.Stitch{
		Content: prompt, Source: thread.PlatformDiscord, ExternalID: m.ID, Author: authorOf(m.Author), Metadata: filesMeta(m),
	})
	if err != nil || !created {
		return err
	}
	c.logger.InfoContext(ctx, "discord conversation started", slog.String("discord_thread_id", threadID))
	// Joining is a hedge (see JoinThread): it runs on a lane of its own at
	// background priority, so neither this channel's next mention nor the
	// thread's messages nor any conversation's first reply waits for it.
	return later(ctx, "join:"+threadID, "join thread", func(ctx context.Context) error {
		c.rest.JoinThread(WithPriority(ctx, PriorityBackground), threadID)
		return nil
	})
}

// opening marks the thread a mention opens (its id is the mention's) as
// being opened until the returned func is called: someone may post in it
// as soon as Discord created it, before weft tracks it, and that message's
// event, on the thread's own lane, must wait for the tracking rather than
// be ignored as untracked. The thread is opened and its messages arrive on
// this shard, so the wait is in memory; a crash in between loses the
// mention as well, as before.
func (c *Conversations) opening(threadID string) (done func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.open[threadID] = ch
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.open, threadID)
		c.mu.Unlock()
		close(ch)
	}
}

// awaitOpening waits while the thread is being opened.
func (c *Conversations) awaitOpening(ctx context.Context, threadID string) error {
	c.mu.Lock()
	ch, ok := c.open[threadID]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MessageUpdated implements Sink: an edit updates the stored text only. A
// message outside a thread weft stored is a mention that opened a
// conversation, stored as its prompt, so the edit is stored the same way.
func (c *Conversations) MessageUpdated(ctx context.Context, m Message) error {
	content := m.Content
	if !m.InThread {
		content = promptOf(m.Content)
	}
	return c.rec.DiscordEdited(ctx, m.ID, content, m.EditedAt)
}

// MessageDeleted implements Sink.
func (c *Conversations) MessageDeleted(ctx context.Context, _, messageID string) error {
	return c.rec.DiscordDeleted(ctx, messageID, time.Now())
}

// ThreadUpdated implements Sink: archived or deleted threads become
// inactive attachments, unarchived ones active again.
func (c *Conversations) ThreadUpdated(ctx context.Context, t Thread) error {
	return c.rec.DiscordThreadActive(ctx, t.ID, t.Active())
}

// codeThreadAlreadyCreated is Discord's answer to starting a second thread
// on a message: a redelivered mention.
const codeThreadAlreadyCreated = "160004"

// leadingMentions matches user mentions at the start of a message: the
// "@weft" that addresses the bot is not part of the question.
var leadingMentions = regexp.MustCompile(`^(\s*<@!?\d+>)+`)

// withoutMentions is content without its leading mentions, trimmed.
func withoutMentions(content string) string {
	return strings.TrimSpace(leadingMentions.ReplaceAllString(content, ""))
}

// promptOf is what a mention that opens a conversation asks: its text
// without the leading mentions, or all of it if that leaves nothing.
func promptOf(content string) string {
	if p := withoutMentions(content); p != "" {
		return p
	}
	return content
}

// stitchOf is the discord_message stitch a person's message becomes. A
// message with neither text nor files (a thread's starter stub) has
// nothing to answer and becomes none.
func stitchOf(m Message) (thread.Stitch, bool) {
	if m.Author.Bot || m.System || strings.TrimSpace(m.Content) == "" && len(m.Files) == 0 {
		return thread.Stitch{}, false
	}
	return thread.Stitch{
		Type: thread.StitchDiscordMessage, Content: m.Content,
		Source: thread.PlatformDiscord, ExternalID: m.ID, Author: authorOf(m.Author), Metadata: filesMeta(m),
	}, true
}

// filesMeta is the stitch metadata naming m's attachments, or none.
func filesMeta(m Message) json.RawMessage {
	if len(m.Files) == 0 {
		return nil
	}
	return thread.Meta{Files: m.Files}.JSON()
}

func authorOf(a Author) *thread.Author {
	return &thread.Author{ID: a.ID, Name: a.Name, Bot: a.Bot}
}
