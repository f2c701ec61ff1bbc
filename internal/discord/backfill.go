package discord

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// maxBackfill bounds the messages one thread's backfill reads: a thread
// that missed more during an outage gets its newest context from the
// thread history the prompt carries, not from hundreds of inputs.
const maxBackfill = 500

// Connected implements Sink: after every READY or RESUMED, each active
// tracked thread of this shard's guilds is read from its REST history after
// the last message stored, through the same path as live messages, so a
// message seen both ways is stored once, and what was missed is answered by
// one turn per thread. A thread that fails is logged and skipped; the next
// reconnect tries it again. Its requests have background priority.
func (c *Conversations) Connected(ctx context.Context) error {
	// Catching up yields to live conversations' requests.
	ctx = WithPriority(ctx, PriorityBackground)
	atts, err := c.rec.ActiveDiscordThreads(ctx)
	if err != nil {
		return err
	}
	var threads, messages int
	for _, a := range atts {
		if ShardOf(a.GuildID, c.shardCount) != c.shardID {
			continue
		}
		n, err := c.backfillThread(ctx, a.DiscordThreadID, a.LastMessageID)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			c.logger.WarnContext(ctx, "discord backfill failed", slog.String("discord_thread_id", a.DiscordThreadID), slog.Any("error", err))
			continue
		}
		threads++
		messages += n
	}
	c.logger.InfoContext(ctx, "discord backfill done", slog.Int("threads", threads), slog.Int("messages", messages))
	return nil
}

// reconcileTail is how many of a thread's newest stored messages a
// backfill compares with Discord's for edits and deletes made while the
// gateway was away: the recent ones, which a follow-up is about.
const reconcileTail = 50

// backfillThread stores what a Discord thread holds after afterID and
// returns how many messages were new. The history is read from before the
// stored tail, so the edits and deletes of those messages missed while
// disconnected are recorded too. A thread Discord no longer has is marked
// inactive.
func (c *Conversations) backfillThread(ctx context.Context, threadID, afterID string) (int, error) {
	tail, err := c.rec.DiscordTail(ctx, threadID, reconcileTail)
	if err != nil {
		return 0, err
	}
	from := afterID
	for _, s := range tail {
		// The thread's starter message (its id is the thread's) lives in
		// the parent channel, not in the thread's history.
		if s.ExternalID != threadID {
			from = olderID(from, precedingID(s.ExternalID))
		}
	}
	msgs, err := c.rest.Messages(ctx, threadID, from, maxBackfill)
	if surface.IsKind(err, surface.KindNotFound) {
		return 0, c.rec.DiscordThreadActive(ctx, threadID, false)
	}
	if err != nil {
		return 0, err
	}
	if err := c.reconcile(ctx, threadID, tail, msgs, len(msgs) < maxBackfill); err != nil {
		return 0, err
	}
	stitches := make([]thread.Stitch, 0, len(msgs))
	last := ""
	for _, m := range msgs {
		if thread.CompareSnowflakes(m.ID, afterID) <= 0 {
			continue // read only to reconcile: stored before
		}
		if s, ok := stitchOf(m); ok {
			stitches = append(stitches, s)
		}
		last = m.ID
	}
	if last == "" {
		return 0, nil
	}
	// Messages come oldest first: the last is where the next backfill starts.
	n, err := c.rec.DiscordMessages(ctx, threadID, stitches, last)
	if errors.Is(err, thread.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

// reconcile records what happened to the stored tail while the gateway was
// away: a message Discord no longer has was deleted, one whose text
// changed was edited. msgs is Discord's history from before the tail,
// oldest first; complete says it reaches the thread's newest message, else
// messages past its last are left for the next reconnect.
func (c *Conversations) reconcile(ctx context.Context, threadID string, tail []thread.Stitch, msgs []Message, complete bool) error {
	live := make(map[string]*Message, len(msgs))
	for i := range msgs {
		live[msgs[i].ID] = &msgs[i]
	}
	newest := ""
	if len(msgs) > 0 {
		newest = msgs[len(msgs)-1].ID
	}
	for _, s := range tail {
		id := s.ExternalID
		if id == threadID || !s.DeletedAt.IsZero() || (!complete && thread.CompareSnowflakes(id, newest) > 0) {
			continue
		}
		m, ok := live[id]
		switch {
		case !ok:
			// Discord does not say when; the reconnect is when weft learnt it.
			if err := c.rec.DiscordDeleted(ctx, id, time.Now()); err != nil {
				return err
			}
		case m.Content != s.Content && !m.EditedAt.IsZero():
			if err := c.rec.DiscordEdited(ctx, id, m.Content, m.EditedAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// precedingID is the snowflake just before id, so that reading "after" it
// includes id itself; an id that is not a number is returned as it is.
func precedingID(id string) string {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 {
		return id
	}
	return strconv.FormatUint(n-1, 10)
}

// olderID is the older of two snowflakes; "" (no cursor) is older than any.
func olderID(a, b string) string {
	if thread.CompareSnowflakes(a, b) <= 0 {
		return a
	}
	return b
}
