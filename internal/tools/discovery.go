package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Defaults of DiscoveryConfig, from the origin design.
const (
	DefaultMaxRelevantThreads      = 10
	DefaultRelevanceScoreThreshold = 0.6
	DefaultThreadFetchTimeout      = 5 * time.Second
	DefaultChannelHistoryTTL       = 5 * time.Minute
	DefaultThreadRepliesTTL        = 10 * time.Minute
)

// Sizes of what discovery reads and shows. The origin ranks the channel's
// last 100 top-level messages; the overview shows only the latest of them,
// and each thread its latest replies, so the prompt stays a prompt.
const (
	channelScan      = 100
	overviewMessages = 20
	maxThreadReplies = 50
)

// DiscoveryConfig tunes relevant thread discovery. Zero fields take the
// defaults (a threshold of 0 too: a model score of 0 is never relevant).
type DiscoveryConfig struct {
	MaxThreads     int           // MAX_RELEVANT_THREADS: threads fetched, best first
	ScoreThreshold float64       // RELEVANCE_SCORE_THRESHOLD: lowest model score kept
	FetchTimeout   time.Duration // THREAD_FETCH_TIMEOUT_MS: bound on fetching them all
	ChannelTTL     time.Duration // how long a channel's history is reused
	ThreadTTL      time.Duration // how long a thread's replies (and a mention's result) are reused
}

func (c DiscoveryConfig) withDefaults() DiscoveryConfig {
	if c.MaxThreads <= 0 {
		c.MaxThreads = DefaultMaxRelevantThreads
	}
	if c.ScoreThreshold <= 0 {
		c.ScoreThreshold = DefaultRelevanceScoreThreshold
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = DefaultThreadFetchTimeout
	}
	if c.ChannelTTL <= 0 {
		c.ChannelTTL = DefaultChannelHistoryTTL
	}
	if c.ThreadTTL <= 0 {
		c.ThreadTTL = DefaultThreadRepliesTTL
	}
	return c
}

// DiscoveryNotice tells the person who mentioned weft that it is searching
// the channel's threads, since that adds a second or two before the answer.
type DiscoveryNotice struct {
	ThreadID        uuid.UUID
	DiscordThreadID string // the conversation's Discord thread: post it there
	MentionID       string // the mention's message id, an idempotency key
	Text            string
}

// DiscordAttachments finds a thread's Discord attachment. *db.Store
// implements it.
type DiscordAttachments interface {
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// Discovery brings the channel's relevant earlier threads into the prompt
// when weft is mentioned in a channel: a person asking "is team_abc123
// affected?" often refers to a thread the bot never saw. It reads the
// channel's last 100 top-level messages, has the fast model rank them for
// relevance to the mention (keyword matching when the model fails or
// answers badly), fetches the best threads in parallel under a timeout, and
// adds the channel overview and those threads to the system prompt. It is
// an agent.ContextProvider; a failure only logs.
type Discovery struct {
	Reader DiscordReader
	Store  DiscordAttachments
	Fast   FastModel // nil: keyword ranking only
	Config DiscoveryConfig
	// Notify, if set, is called once per mention, before ranking, with a
	// notice for the person who asked. cmd/weft posts it in the Discord
	// thread with the mention id as the nonce, so a retried turn does not
	// post it twice. It should return quickly; the turn waits for it.
	Notify func(ctx context.Context, n DiscoveryNotice)
	Now    func() time.Time // nil: time.Now; tests move the clock
	Logger *slog.Logger

	channels ttlCache[[]ChannelMessage] // by channel id
	threads  ttlCache[[]ChannelMessage] // replies, by thread id
	// sections keeps each mention's result for its turn: PromptSections runs
	// before every model call of a turn, and ranking once is enough. Only
	// the mention's own turn asks, so the result is kept for sectionTTL,
	// not ThreadTTL: a turn that outlasts it (an outage waited out) ranks
	// again.
	sections ttlCache[string]
}

// sectionTTL is how long a mention's discovery result is reused.
const sectionTTL = 2 * time.Minute

// PromptSections implements agent.ContextProvider.
func (d *Discovery) PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string {
	mention := mentionInChannel(chain)
	if mention == nil {
		return nil
	}
	cfg := d.Config.withDefaults()
	if sec, ok := d.sections.get(mention.ExternalID, d.now()); ok {
		return nonEmpty(sec)
	}
	att, err := d.Store.DiscordAttachment(ctx, th.ID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	if err == nil {
		var sec string
		if sec, err = d.discover(ctx, cfg, th, att, mention); err == nil {
			// A turn cancelled midway got a degraded result; its resumption
			// should search again, not reuse that.
			if ctx.Err() == nil {
				d.sections.put(mention.ExternalID, sec, d.now(), sectionTTL)
			}
			return nonEmpty(sec)
		}
	}
	d.Logger.WarnContext(ctx, "relevant thread discovery failed; answering without it",
		slog.String("thread_id", th.ID.String()), slog.Any("error", err))
	return nil
}

// mentionInChannel returns the input discovery answers: a mention of weft
// in a channel, outside any thread. weft's Discord sink opens a thread on
// such a mention and makes the mention the new weft thread's initial prompt,
// sourced from Discord, with the mention's message id; the attachment names
// the channel. Everything said inside a thread (replies after the mention,
// messages in a tracked thread) is a discord_message stitch, and a
// conversation continued from Linear has a Linear or API initial prompt, so
// this is false there and discovery is skipped: the thread's own history
// is the context then.
func mentionInChannel(chain []thread.Stitch) *thread.Stitch {
	cur := latestInput(chain)
	if cur == nil || cur.Type != thread.StitchInitialPrompt || cur.Source != thread.PlatformDiscord || !thread.IsSnowflake(cur.ExternalID) {
		return nil
	}
	return cur
}

// discover builds the section for a mention; "" when the channel had
// nothing before it.
func (d *Discovery) discover(ctx context.Context, cfg DiscoveryConfig, th *thread.Thread, att *thread.DiscordAttachment, mention *thread.Stitch) (string, error) {
	history, err := d.cached(ctx, &d.channels, att.ChannelID, cfg.ChannelTTL, channelScan)
	if err != nil {
		return "", fmt.Errorf("read channel %s: %w", att.ChannelID, err)
	}
	// Only what was posted before the mention: the cache may hold newer
	// messages, and the mention itself is the question.
	var earlier []ChannelMessage
	for _, m := range history {
		if thread.CompareSnowflakes(m.ID, mention.ExternalID) < 0 && strings.TrimSpace(m.Text) != "" {
			earlier = append(earlier, m)
		}
	}
	if len(earlier) == 0 {
		return "", nil
	}
	if d.Notify != nil {
		d.Notify(ctx, DiscoveryNotice{ThreadID: th.ID, DiscordThreadID: att.DiscordThreadID, MentionID: mention.ExternalID,
			Text: "🔎 Searching this channel's recent threads for context…"})
	}
	picks, how := d.rank(ctx, cfg, mention.Content, earlier)
	found := d.fetchThreads(ctx, cfg, picks)
	return render(earlier, found, how), nil
}

// cached returns a channel's or thread's latest messages, oldest first,
// from cache while fresh. A thread that does not exist (a message nobody
// replied to in a thread) reads as no messages, and is cached as such.
func (d *Discovery) cached(ctx context.Context, c *ttlCache[[]ChannelMessage], id string, ttl time.Duration, n int) ([]ChannelMessage, error) {
	if msgs, ok := c.get(id, d.now()); ok {
		return msgs, nil
	}
	msgs, err := d.Reader.MessagesBefore(ctx, id, "", n)
	if err != nil && !errors.Is(err, thread.ErrNotFound) {
		return nil, err
	}
	c.put(id, msgs, d.now(), ttl)
	return msgs, nil
}

// found is a relevant message with its thread's replies, if they arrived.
type found struct {
	pick
	replies []ChannelMessage
}

// fetchThreads reads the picks' threads in parallel under the fetch
// timeout. Threads not read in time, or whose read failed, keep only their
// root: partial results beat none.
func (d *Discovery) fetchThreads(ctx context.Context, cfg DiscoveryConfig, picks []pick) []found {
	ctx, cancel := context.WithTimeout(ctx, cfg.FetchTimeout)
	defer cancel()
	type result struct {
		i       int
		replies []ChannelMessage
		err     error
	}
	// Buffered, so a fetch finishing after the timeout never blocks.
	results := make(chan result, len(picks))
	for i, p := range picks {
		go func() {
			replies, err := d.cached(ctx, &d.threads, p.msg.ID, cfg.ThreadTTL, maxThreadReplies)
			results <- result{i, replies, err}
		}()
	}
	out := make([]found, len(picks))
	for i, p := range picks {
		out[i].pick = p
	}
	for range picks {
		select {
		case r := <-results:
			if r.err != nil {
				d.Logger.WarnContext(ctx, "relevant thread not read", slog.String("discord_thread_id", picks[r.i].msg.ID), slog.Any("error", r.err))
			}
			out[r.i].replies = r.replies
		case <-ctx.Done():
			d.Logger.WarnContext(ctx, "relevant threads not all read in time; using what arrived", slog.Duration("timeout", cfg.FetchTimeout))
			return out
		}
	}
	return out
}

// render is the prompt section: the channel overview, then the relevant
// threads as the origin formats them.
func render(earlier []ChannelMessage, threads []found, how string) string {
	var b strings.Builder
	b.WriteString("<discord_channel_context>\nRecent messages in this channel, oldest first:\n")
	for _, m := range earlier[max(0, len(earlier)-overviewMessages):] {
		fmt.Fprintf(&b, "[%s] %s: %s\n", stamp(m.At), orUnknown(m.Author), clipText(m.Text, maxText))
	}
	if len(threads) == 0 {
		b.WriteString("\nNo earlier thread in this channel looks relevant to the question.\n")
	} else {
		fmt.Fprintf(&b, "\nRelevant threads from this channel (%d, ranked by %s), most relevant first:\n", len(threads), how)
	}
	for _, t := range threads {
		fmt.Fprintf(&b, "Thread from %s: %s: %s\n", stamp(t.msg.At), orUnknown(t.msg.Author), clipText(t.msg.Text, maxText))
		if t.reason != "" {
			fmt.Fprintf(&b, "  Why relevant: %s\n", clipText(t.reason, maxText))
		}
		for _, r := range t.replies {
			if r.ID != t.msg.ID && strings.TrimSpace(r.Text) != "" {
				fmt.Fprintf(&b, "  Reply: %s: %s\n", orUnknown(r.Author), clipText(r.Text, maxText))
			}
		}
	}
	b.WriteString("</discord_channel_context>")
	return b.String()
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func (d *Discovery) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func nonEmpty(sec string) []string {
	if sec == "" {
		return nil
	}
	return []string{sec}
}
