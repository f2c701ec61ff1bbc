// Package discovery brings a channel's relevant earlier threads into the
// prompt when weft is mentioned there: one algorithm (read the channel's
// recent top-level messages, rank them with the fast model or by
// keywords, fetch the best threads in parallel under a timeout) over
// every platform, each a Source, with its reads cached. It also
// holds the message shape its sources return (ChannelMessage).
package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// Defaults of Config, from the origin design.
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

// Config tunes relevant thread discovery. Zero fields take the
// defaults (a threshold of 0 too: a model score of 0 is never relevant).
type Config struct {
	MaxThreads     int           // MAX_RELEVANT_THREADS: threads fetched, best first
	ScoreThreshold float64       // RELEVANCE_SCORE_THRESHOLD: lowest model score kept
	FetchTimeout   time.Duration // THREAD_FETCH_TIMEOUT_MS: bound on fetching them all
	ChannelTTL     time.Duration // how long a channel's history is reused
	ThreadTTL      time.Duration // how long a thread's replies (and a mention's result) are reused
}

func (c Config) withDefaults() Config {
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

// Channel is the channel a mention was made in, as a
// Source names it.
type Channel struct {
	// Key names the channel among every platform's and workspace's: its
	// history's cache key.
	Key string
	// ID is the channel's id on its platform; Team its Slack workspace.
	ID, Team string
	// ThreadID is the weft thread the mention opened; Reply where it is
	// answered on the platform (a Discord thread id, a Slack thread ts).
	ThreadID uuid.UUID
	Reply    string
	// MentionID is the mention's message id, in the channel's ids.
	MentionID string
	// Org is the mention's organisation, the bound of what is read.
	Org string
}

// Source is one platform's side of relevant thread discovery:
// where a mention was made, the channel's top-level messages and the
// threads under them. Message ids are the platform's and order as posted.
type Source interface {
	// Platform names the platform in the prompt ("Discord").
	Platform() string
	// Channel returns the channel of a mention outside any thread, or nil
	// when mention is not one (a message in a thread, a direct message):
	// discovery is skipped then.
	Channel(ctx context.Context, th *thread.Thread, mention *thread.Stitch) (*Channel, error)
	// Before reports whether message a was posted before message b.
	Before(a, b string) bool
	// TopLevel returns the channel's newest n top-level messages, oldest
	// first.
	TopLevel(ctx context.Context, ch *Channel, n int) ([]ChannelMessage, error)
	// Thread returns the newest n messages of the thread under a top-level
	// message, oldest first (the root itself may be among them). A message
	// nobody replied to has none.
	Thread(ctx context.Context, ch *Channel, root ChannelMessage, n int) ([]ChannelMessage, error)
	// Notify tells the person who mentioned weft that it is searching the
	// channel's threads, since that adds a second or two before the
	// answer. It should return quickly; the turn waits for it.
	Notify(ctx context.Context, ch *Channel)
}

// Discovery brings the channel's relevant earlier threads into the prompt
// when weft is mentioned in a channel: a person asking "is team_abc123
// affected?" often refers to a thread the bot never saw. It reads the
// channel's last 100 top-level messages, has the fast model rank them for
// relevance to the mention (keyword matching when the model fails or
// answers badly), fetches the best threads in parallel under a timeout, and
// adds the channel overview and those threads to the system prompt. One
// Discovery serves every platform, each through its Source, keyed
// by the platform of the mention's stitch. It is an agent.ContextProvider;
// a failure only logs.
type Discovery struct {
	Sources map[thread.Platform]Source
	Fast    FastModel // nil: keyword ranking only
	Config  Config
	Now     func() time.Time // nil: time.Now; tests move the clock
	Logger  *slog.Logger

	channels ttlcache.Cache[[]ChannelMessage] // by channel key
	threads  ttlcache.Cache[[]ChannelMessage] // replies, by channel key and root id
	reads    singleflight.Group               // reads of either in flight, by key
	// sections keeps each mention's result for its turn: PromptSections runs
	// before every model call of a turn, and ranking once is enough. Only
	// the mention's own turn asks, so the result is kept for sectionTTL,
	// not ThreadTTL: a turn that outlasts it (an outage waited out) ranks
	// again.
	sections ttlcache.Cache[string]
}

// sectionTTL is how long a mention's discovery result is reused.
const sectionTTL = 2 * time.Minute

// PromptSections implements agent.ContextProvider.
func (d *Discovery) PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string {
	mention := history.LatestInput(chain)
	if mention == nil || mention.Type != thread.StitchInitialPrompt {
		return nil
	}
	src := d.Sources[mention.Source]
	if src == nil {
		return nil
	}
	cfg := d.Config.withDefaults()
	key := string(mention.Source) + ":" + mention.ExternalID
	if sec, ok := d.sections.Get(key, d.now()); ok {
		return nonEmpty(sec)
	}
	ch, err := src.Channel(ctx, th, mention)
	if err == nil && ch == nil {
		return nil
	}
	if err == nil {
		var sec string
		if sec, err = d.discover(ctx, cfg, src, ch, mention); err == nil {
			// A turn cancelled midway got a degraded result; its resumption
			// should search again, not reuse that.
			if ctx.Err() == nil {
				d.sections.Put(key, sec, d.now(), sectionTTL)
			}
			return nonEmpty(sec)
		}
	}
	d.Logger.WarnContext(ctx, "relevant thread discovery failed; answering without it",
		slog.String("thread_id", th.ID.String()), slog.Any("error", err))
	return nil
}

// discover builds the section for a mention; "" when the channel had
// nothing before it.
func (d *Discovery) discover(ctx context.Context, cfg Config, src Source, ch *Channel, mention *thread.Stitch) (string, error) {
	history, err := cached(d, &d.channels, ch.Key, cfg.ChannelTTL, func() ([]ChannelMessage, error) {
		return src.TopLevel(ctx, ch, channelScan)
	})
	if err != nil {
		return "", fmt.Errorf("read channel %s: %w", ch.ID, err)
	}
	// Only what was posted before the mention: the cache may hold newer
	// messages, and the mention itself is the question.
	var earlier []ChannelMessage
	for _, m := range history {
		if src.Before(m.ID, ch.MentionID) && strings.TrimSpace(m.Text) != "" {
			earlier = append(earlier, m)
		}
	}
	if len(earlier) == 0 {
		return "", nil
	}
	src.Notify(ctx, ch)
	picks, how := d.rank(ctx, cfg, src.Platform(), mention.Content, earlier)
	found := d.fetchThreads(ctx, cfg, src, ch, picks)
	return render(src.Platform(), earlier, found, how), nil
}

// cached returns a channel's or thread's latest messages, oldest first,
// from cache while fresh, else from read. A thread that does not exist (a
// message nobody replied to) reads as no messages, and is cached as such.
//
// Concurrent misses of one key share one read: a burst of mentions in a
// channel would otherwise read its history once per mention, each read
// spending the platform's rate limit before any of them fills the cache.
func cached(d *Discovery, c *ttlcache.Cache[[]ChannelMessage], key string, ttl time.Duration, read func() ([]ChannelMessage, error)) ([]ChannelMessage, error) {
	if msgs, ok := c.Get(key, d.now()); ok {
		return msgs, nil
	}
	v, err, _ := d.reads.Do(key, func() (any, error) {
		if msgs, ok := c.Get(key, d.now()); ok {
			return msgs, nil // filled by the read this one queued behind
		}
		msgs, err := read()
		if err != nil && !errors.Is(err, thread.ErrNotFound) {
			return nil, err
		}
		c.Put(key, msgs, d.now(), ttl)
		return msgs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]ChannelMessage), nil
}

// found is a relevant message with its thread's replies, if they arrived.
type found struct {
	pick
	replies []ChannelMessage
}

// fetchThreads reads the picks' threads in parallel under the fetch
// timeout. Threads not read in time, or whose read failed, keep only their
// root: partial results beat none.
func (d *Discovery) fetchThreads(ctx context.Context, cfg Config, src Source, ch *Channel, picks []pick) []found {
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
			replies, err := cached(d, &d.threads, ch.Key+"/"+p.msg.ID, cfg.ThreadTTL, func() ([]ChannelMessage, error) {
				return src.Thread(ctx, ch, p.msg, maxThreadReplies)
			})
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
				d.Logger.WarnContext(ctx, "relevant thread not read", slog.String("channel_id", ch.ID), slog.String("message_id", picks[r.i].msg.ID), slog.Any("error", r.err))
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
func render(platform string, earlier []ChannelMessage, threads []found, how string) string {
	tag := strings.ToLower(platform) + "_channel_context"
	var b strings.Builder
	b.WriteString("<" + tag + ">\nRecent messages in this channel, oldest first:\n")
	for _, m := range earlier[max(0, len(earlier)-overviewMessages):] {
		fmt.Fprintf(&b, "[%s] %s: %s\n", stamp(m.At), history.OrUnknown(m.Author), Clip(m.Text, maxText))
	}
	if len(threads) == 0 {
		b.WriteString("\nNo earlier thread in this channel looks relevant to the question.\n")
	} else {
		fmt.Fprintf(&b, "\nRelevant threads from this channel (%d, ranked by %s), most relevant first:\n", len(threads), how)
	}
	for _, t := range threads {
		fmt.Fprintf(&b, "Thread from %s: %s: %s\n", stamp(t.msg.At), history.OrUnknown(t.msg.Author), Clip(t.msg.Text, maxText))
		if t.reason != "" {
			fmt.Fprintf(&b, "  Why relevant: %s\n", Clip(t.reason, maxText))
		}
		for _, r := range t.replies {
			if r.ID != t.msg.ID && strings.TrimSpace(r.Text) != "" {
				fmt.Fprintf(&b, "  Reply: %s: %s\n", history.OrUnknown(r.Author), Clip(r.Text, maxText))
			}
		}
	}
	b.WriteString("</" + tag + ">")
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

// ChannelMessage is a Discord message as the Discord tools see it, fetched
// from Discord or read from what weft stored; discovery reads Slack's
// messages as ChannelMessages too (the id is then the message's ts).
type ChannelMessage struct {
	ID       string
	AuthorID string
	Author   string
	Bot      bool
	Text     string
	At       time.Time
	Edited   bool
	// NoReplies is set when the platform says nobody replied to it in a
	// thread (Slack's reply_count), so there is no thread to read.
	NoReplies bool
}

// FastModel answers one prompt with the fast model (WEFT_FAST_MODEL).
// cmd/weft adapts an llm.Provider: discovery does not depend on llm.
type FastModel interface {
	Ask(ctx context.Context, system, prompt string) (string, error)
}

// Clip puts text on one line and keeps its first n characters.
func Clip(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > n {
		return string(r[:n])
	}
	return text
}

// maxText is where a message's text is cut in the prompt, as in the
// Discord tools' results.
const maxText = 300
