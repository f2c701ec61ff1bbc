package discord

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/thread"
)

// Attachments finds a thread's Discord attachment. *db.Store implements it.
type Attachments interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// HistorySection is Discord's history section: the Discord thread's
// messages read through f, with those weft saw deleted put back.
func HistorySection(f history.Fetcher, store Attachments) *history.Fetched {
	return &history.Fetched{Fetcher: f, Tag: "discord_thread_context",
		Ref: func(ctx context.Context, th *thread.Thread) (history.Ref, bool, error) {
			d, err := store.DiscordAttachment(ctx, th.ID)
			if err != nil {
				return history.Ref{}, false, err
			}
			return history.Ref{ID: d.DiscordThreadID}, true, nil
		},
		Opened: opened, Amend: withDeletions}
}

// opened reports whether cur is the mention a Discord thread was started
// from (the thread has the message's id): that thread's first turn, which
// reads nothing, sparing the bot's global rate limit that a burst of
// mentions needs for their threads and first replies.
func opened(cur *thread.Stitch, ref history.Ref) bool {
	return cur.Source == thread.PlatformDiscord && cur.Type == thread.StitchInitialPrompt && cur.ExternalID == ref.ID
}

// withDeletions puts the Discord messages weft saw deleted back in
// their places, as deleted: Discord's history no longer returns them, and
// the conversation shows them as withdrawn, so the section does too. Only
// those within the history read (from its first message on) are placed.
func withDeletions(msgs []history.Message, chain []thread.Stitch) []history.Message {
	if len(msgs) == 0 {
		return msgs
	}
	var out []history.Message
	for i := range chain {
		s := &chain[i]
		if s.Source != thread.PlatformDiscord || s.DeletedAt.IsZero() || !thread.IsSnowflake(s.ExternalID) ||
			thread.CompareSnowflakes(s.ExternalID, msgs[0].ID) < 0 {
			continue
		}
		m := history.Message{ID: s.ExternalID, Deleted: true}
		if s.Author != nil {
			m.Author = s.Author.Name
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return msgs
	}
	for _, m := range msgs {
		if !slices.ContainsFunc(out, func(d history.Message) bool { return d.ID == m.ID }) {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b history.Message) int { return thread.CompareSnowflakes(a.ID, b.ID) })
	return out
}
