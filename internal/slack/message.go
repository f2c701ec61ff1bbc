package slack

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"

	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/surface"
)

// OutboxEventType is the metadata event_type of every message weft posts;
// its payload names the outbox row and part, so that a post whose answer was
// lost can be found in the thread instead of being sent twice.
const OutboxEventType = "weft_outbox"

// Message is one Slack message as weft reads it.
type Message struct {
	TS       string
	ThreadTS string // empty outside a thread; equal to TS on its parent
	User     string
	BotID    string
	AppID    string // of the bot that posted it, from bot_profile
	Text     string
	Subtype  string
	EditedTS string // when it was last edited; empty if never
	// ReplyCount is set on a thread's parent.
	ReplyCount int
	// OutboxID and Part are read from weft_outbox metadata (only returned
	// when the read asked for IncludeMetadata); OutboxID is empty otherwise.
	OutboxID string
	Part     int
}

// fromSlack converts slack-go's message.
func fromSlack(m goslack.Message) Message {
	out := Message{
		TS: m.Timestamp, ThreadTS: m.ThreadTimestamp, User: m.User, BotID: m.BotID,
		Text: m.Text, Subtype: m.SubType, ReplyCount: m.ReplyCount,
	}
	if m.BotProfile != nil {
		out.AppID = m.BotProfile.AppID
	}
	if m.Edited != nil {
		out.EditedTS = m.Edited.Timestamp
	}
	if m.Metadata.EventType == OutboxEventType {
		if id, ok := m.Metadata.EventPayload["outbox_id"].(string); ok {
			out.OutboxID = id
		}
		switch p := m.Metadata.EventPayload["part"].(type) {
		case float64:
			out.Part = int(p)
		case string:
			out.Part, _ = strconv.Atoi(p)
		}
	}
	return out
}

// ReadOptions page and bound a conversations.replies/history read.
type ReadOptions struct {
	Cursor string
	// Limit is the page size; zero leaves Slack's default.
	Limit int
	// Oldest and Latest bound the messages by ts; Inclusive includes them.
	Oldest, Latest string
	Inclusive      bool
	// IncludeMetadata asks for messages' whole metadata (weft's outbox ids).
	IncludeMetadata bool
}

// Page is one page of messages, oldest first for replies (the parent
// first) and newest first for history, as Slack returns them. NextCursor is
// empty on the last page.
type Page struct {
	Messages   []Message
	HasMore    bool
	NextCursor string
}

// Replies reads one page of a thread (conversations.replies): the parent
// first, then its replies. A 429 comes back at once as KindRateLimited with
// Slack's Retry-After; auth errors are never retried; server and network
// failures are retried up to 3 times with backoff.
func (c *Client) Replies(ctx context.Context, channel, threadTS string, o ReadOptions) (Page, error) {
	return read(ctx, c, "conversations.replies", func(ctx context.Context) (Page, error) {
		if err := c.paceHistory(ctx, "conversations.replies"); err != nil {
			return Page{}, err
		}
		msgs, more, cursor, err := c.api.GetConversationRepliesContext(ctx, &goslack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: threadTS, Cursor: o.Cursor, Limit: o.Limit,
			Oldest: o.Oldest, Latest: o.Latest, Inclusive: o.Inclusive, IncludeAllMetadata: o.IncludeMetadata,
		})
		if err != nil {
			return Page{}, err
		}
		return toPage(msgs, more, cursor), nil
	})
}

// History reads one page of a channel's top-level messages
// (conversations.history), newest first, retried like Replies.
func (c *Client) History(ctx context.Context, channel string, o ReadOptions) (Page, error) {
	return read(ctx, c, "conversations.history", func(ctx context.Context) (Page, error) {
		if err := c.paceHistory(ctx, "conversations.history"); err != nil {
			return Page{}, err
		}
		r, err := c.api.GetConversationHistoryContext(ctx, &goslack.GetConversationHistoryParameters{
			ChannelID: channel, Cursor: o.Cursor, Limit: o.Limit,
			Oldest: o.Oldest, Latest: o.Latest, Inclusive: o.Inclusive, IncludeAllMetadata: o.IncludeMetadata,
		})
		if err != nil {
			return Page{}, err
		}
		return toPage(r.Messages, r.HasMore, r.ResponseMetaData.NextCursor), nil
	})
}

func toPage(msgs []goslack.Message, more bool, cursor string) Page {
	p := Page{Messages: make([]Message, 0, len(msgs)), HasMore: more, NextCursor: cursor}
	for _, m := range msgs {
		p.Messages = append(p.Messages, fromSlack(m))
	}
	return p
}

// Post is one message for chat.postMessage.
type Post struct {
	Channel string
	// ThreadTS is the thread's parent ts; empty posts at the top level.
	ThreadTS string
	// Text is sent as is, as mrkdwn: escape model output with Escape first.
	Text string
	// OutboxID, when set, goes into the message's weft_outbox metadata with
	// Part, for FindPosted.
	OutboxID string
	Part     int
	// Blocks, when set, are what Slack shows (Text is then the
	// notification's and screen readers' fallback).
	Blocks []goslack.Block
}

// PostMessage sends one message (chat.postMessage) and returns its ts,
// waiting first for the channel's pace (one post per PostInterval). It is
// not retried: chat.postMessage has no idempotency key, so after a failure
// that surface.Ambiguous reports, look for the post with FindPosted before sending
// again. Link and media previews are off, and link_names is never sent, so
// a plain @here stays text.
func (c *Client) PostMessage(ctx context.Context, p Post) (string, error) {
	if err := c.pace(ctx, p.Channel); err != nil {
		return "", fmt.Errorf("slack: chat.postMessage: %w", err)
	}
	opts := []goslack.MsgOption{
		goslack.MsgOptionText(p.Text, false),
		goslack.MsgOptionDisableLinkUnfurl(),
		goslack.MsgOptionDisableMediaUnfurl(),
	}
	if p.ThreadTS != "" {
		opts = append(opts, goslack.MsgOptionTS(p.ThreadTS))
	}
	if len(p.Blocks) > 0 {
		opts = append(opts, goslack.MsgOptionBlocks(p.Blocks...))
	}
	if p.OutboxID != "" {
		opts = append(opts, outboxMetadata(p.OutboxID, p.Part))
	}
	_, ts, err := c.api.PostMessageContext(ctx, p.Channel, opts...)
	if err = translate("chat.postMessage", err); err != nil {
		if surface.IsKind(err, surface.KindRateLimited) {
			// Slack refused it: the channel's next post waits as asked.
			c.delay(p.Channel, err)
		}
		return "", err
	}
	return ts, nil
}

// pace waits until the channel may take another post and books the slot
// after it.
func (c *Client) pace(ctx context.Context, channel string) error {
	c.mu.Lock()
	now := time.Now()
	at := now
	if next := c.nextPost[channel]; next.After(now) {
		at = next
	}
	c.nextPost[channel] = at.Add(c.postInterval)
	c.mu.Unlock()
	return retry.Sleep(ctx, at.Sub(now))
}

// delay pushes a channel's next post back by a rate limit's Retry-After.
func (c *Client) delay(channel string, err error) {
	d := retry.Hint(err)
	c.mu.Lock()
	if at := time.Now().Add(d); at.After(c.nextPost[channel]) {
		c.nextPost[channel] = at
	}
	c.mu.Unlock()
}

// FindPosted looks in a thread for the messages weft posted for an outbox
// row (by their weft_outbox metadata) and returns their ts by part. since
// bounds the search: posts older than it are not read (pass a little before
// the row was first sent). It reads every page from there.
func (c *Client) FindPosted(ctx context.Context, channel, threadTS, outboxID string, since time.Time) (map[int]string, error) {
	found := make(map[int]string)
	o := ReadOptions{IncludeMetadata: true, Limit: 200}
	if !since.IsZero() {
		o.Oldest = FormatTS(since)
	}
	for {
		page, err := c.Replies(ctx, channel, threadTS, o)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Messages {
			if m.OutboxID == outboxID {
				found[m.Part] = m.TS
			}
		}
		if page.NextCursor == "" {
			return found, nil
		}
		o.Cursor = page.NextCursor
	}
}

// FormatTS is t as a Slack ts ("1355517523.000005").
func FormatTS(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// ParseTS reads a Slack ts as a time; zero if it is not one.
func ParseTS(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	var us int64
	if frac != "" {
		for len(frac) < 6 {
			frac += "0"
		}
		us, err = strconv.ParseInt(frac[:6], 10, 64)
		if err != nil {
			return time.Time{}
		}
	}
	return time.Unix(s, us*1000)
}

// ThreadURL is the permalink of a message (a thread's parent), built from
// the workspace's URL as auth.test gives it: Slack's own permalink form,
// without a chat.getPermalink call per link.
func (c *Client) ThreadURL(ctx context.Context, channel, ts string) (string, error) {
	id, err := c.Identity(ctx)
	if err != nil {
		return "", err
	}
	if id.URL == "" {
		return "", fmt.Errorf("slack: auth.test gave no workspace url")
	}
	return strings.TrimSuffix(id.URL, "/") + "/archives/" + channel + "/p" + strings.Replace(ts, ".", "", 1), nil
}

// StartThread posts a conversation's parent message at the top of a
// channel, its goal in bold and a link back to where it comes from
// (fromLabel, fromURL; either may be empty), and returns its ts (the
// thread's) and permalink. It is posted at once, not through the outbox:
// the rows posted under it name the ts it returns.
func (c *Client) StartThread(ctx context.Context, channel, goal, fromLabel, fromURL string) (ts, url string, err error) {
	text := "*" + Escape(strings.Join(strings.Fields(goal), " ")) + "*"
	switch {
	case fromURL != "" && fromLabel != "":
		text += "\nContinued from <" + Escape(fromURL) + "|" + Escape(fromLabel) + ">"
	case fromURL != "":
		text += "\nContinued from " + Escape(fromURL)
	case fromLabel != "":
		text += "\nContinued from " + Escape(fromLabel)
	}
	if ts, err = c.PostMessage(ctx, Post{Channel: channel, Text: text}); err != nil {
		return "", "", err
	}
	url, err = c.ThreadURL(ctx, channel, ts)
	return ts, url, err
}
