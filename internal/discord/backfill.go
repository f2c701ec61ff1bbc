package discord

import (
	"context"
	"errors"
	"log/slog"

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
// reconnect tries it again.
func (c *Conversations) Connected(ctx context.Context) error {
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

// backfillThread stores what a Discord thread holds after afterID and
// returns how many messages were new. A thread Discord no longer has is
// marked inactive.
func (c *Conversations) backfillThread(ctx context.Context, threadID, afterID string) (int, error) {
	msgs, err := c.rest.Messages(ctx, threadID, afterID, maxBackfill)
	var de *Error
	if errors.As(err, &de) && de.Kind == KindNotFound {
		return 0, c.rec.DiscordThreadActive(ctx, threadID, false)
	}
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	stitches := make([]thread.Stitch, 0, len(msgs))
	for _, m := range msgs {
		if s, ok := stitchOf(m); ok {
			stitches = append(stitches, s)
		}
	}
	// Messages come oldest first: the last is where the next backfill starts.
	n, err := c.rec.DiscordMessages(ctx, threadID, stitches, msgs[len(msgs)-1].ID)
	if errors.Is(err, thread.ErrNotFound) {
		return 0, nil
	}
	return n, err
}
