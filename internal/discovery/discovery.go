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
	"slices"
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
	// DefaultRankTimeout bounds the fast model's ranking: the origin
	// budgets about 2 s for all of discovery ("LLM relevance call:
	// ~500-1000ms"), and a person is waiting.
	DefaultRankTimeout = 2 * time.Second
)

// Sizes of what discovery reads and shows. The origin ranks the channel's
// last 100 top-level messages (getChannelHistory(channel, botUserId, 100)):
// the 100 before the mention, less the bot's own; the overview shows only
// the latest of them, and each thread its latest replies, so the prompt
// stays a prompt.
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
	// RankTimeout bounds the fast model's ranking, retries included; a
	// ranking that takes longer leaves the mention without discovery.
	RankTimeout time.Duration
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
	if c.RankTimeout <= 0 {
		c.RankTimeout = DefaultRankTimeout
	}
	return c
}

// Channel is the channel a mention was made in, as a
// Source names it.
type Channel struct {
	// Key names the channel among every platform's and workspace's: its
	// history's cache key.
	Key string
	// ID is the channel's id on its platform; Team its workspace, on a
	// platform whose channel ids are only unique within one (else "").
	ID, Team string
	// ThreadID is the weft thread the mention opened; Reply where it is
	// answered on the platform (a thread id, or a parent message's id).
	ThreadID uuid.UUID
	Reply    string
	// MentionID is the mention's message id, in the channel's ids.
	MentionID string
	// Org is the mention's organisation, the bound of what is read.
	Org string
	// BotUserID is weft's own user in the channel (the origin's
	// botUserId): its top-level posts are not ranked. "" when unknown.
	BotUserID string
}

// Source is one platform's side of relevant thread discovery:
// where a mention was made, the channel's top-level messages and the
// threads under them. Message ids are the platform's and order as posted.
type Source interface {
	// Platform names the platform in the prompt, capitalised as people write it.
	Platform() string
	// Channel returns the channel of a mention outside any thread, or nil
	// when mention is not one (a message in a thread, a direct message):
	// discovery is skipped then.
	Channel(ctx context.Context, th *thread.Thread, mention *thread.Stitch) (*Channel, error)
	// Before reports whether message a was posted before message b.
	Before(a, b string) bool
	// TopLevel returns the channel's newest n top-level messages before
	// the mention (ch.MentionID), oldest first.
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
// nothing before it, or the ranking took too long.
func (d *Discovery) discover(ctx context.Context, cfg Config, src Source, ch *Channel, mention *thread.Stitch) (string, error) {
	history, err := cached(d, &d.channels, ch.Key, cfg.ChannelTTL, func() ([]ChannelMessage, error) {
		return src.TopLevel(ctx, ch, channelScan)
	})
	if err != nil {
		return "", fmt.Errorf("read channel %s: %w", ch.ID, err)
	}
	// Only what was posted before the mention (the cache may hold newer
	// messages, and the mention itself is the question), and not the
	// bot's own posts, as the origin's getChannelHistory(botUserId).
	var earlier []ChannelMessage
	for _, m := range history {
		if src.Before(m.ID, ch.MentionID) && strings.TrimSpace(m.Text) != "" && (ch.BotUserID == "" || m.AuthorID != ch.BotUserID) {
			earlier = append(earlier, m)
		}
	}
	earlier = earlier[max(0, len(earlier)-channelScan):]
	if len(earlier) == 0 {
		return "", nil
	}
	src.Notify(ctx, ch)
	res, err := d.FindRelevantThreads(ctx, cfg, src, ch, mention.Content, earlier)
	if errors.Is(err, errRankTimeout) {
		d.Logger.WarnContext(ctx, "relevance ranking took too long; answering without discovery",
			slog.String("channel_id", ch.ID), slog.Duration("timeout", cfg.RankTimeout))
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return Render(src.Platform(), earlier, res), nil
}

// Result is relevant-thread-discovery.md's output: the relevant threads,
// most relevant first, and a summary of them ("Found 3 relevant threads
// about cold starts, team IDs"). The prompt's section is rendered from it.
type Result struct {
	RelevantThreads []RelevantThread `json:"relevantThreads"`
	Summary         string           `json:"summary"`
}

// RelevantThread is one relevant thread: its root and replies as
// "author: text", the root's timestamp (in the form timestamps gives, as
// the ranking named it), and why it is relevant.
type RelevantThread struct {
	RootMessage     string   `json:"rootMessage"`
	ThreadMessages  []string `json:"threadMessages"`
	Timestamp       string   `json:"timestamp"`
	RelevanceReason string   `json:"relevanceReason"`
}

// errRankTimeout is a ranking cut off by Config.RankTimeout.
var errRankTimeout = errors.New("relevance ranking timed out")

// FindRelevantThreads is the origin's findRelevantThreads: rank the
// channel's top-level messages (earlier, oldest first) for relevance to
// prompt, fetch the best threads, and return them as the origin's object.
// It fails only when the ranking outlasts Config.RankTimeout; a failed
// ranking falls back to keywords, a failed thread read keeps the root.
func (d *Discovery) FindRelevantThreads(ctx context.Context, cfg Config, src Source, ch *Channel, prompt string, earlier []ChannelMessage) (Result, error) {
	picks, how, err := d.rank(ctx, cfg, src.Platform(), prompt, earlier)
	if err != nil {
		return Result{}, err
	}
	found := d.fetchThreads(ctx, cfg, src, ch, picks)
	res := Result{RelevantThreads: []RelevantThread{}}
	var topics []string
	for _, t := range found {
		rt := RelevantThread{RootMessage: said(t.msg), ThreadMessages: []string{}, Timestamp: t.ts, RelevanceReason: t.reason}
		for _, r := range t.replies {
			if r.ID != t.msg.ID && strings.TrimSpace(r.Text) != "" {
				rt.ThreadMessages = append(rt.ThreadMessages, said(r))
			}
		}
		res.RelevantThreads = append(res.RelevantThreads, rt)
		for _, topic := range t.topics {
			if topic != "" && !slices.Contains(topics, topic) {
				topics = append(topics, topic)
			}
		}
	}
	res.Summary = summary(len(found), topics, how)
	return res, nil
}

// summary is the origin's "Found 3 relevant threads about cold starts,
// team IDs", saying how they were ranked.
func summary(n int, topics []string, how string) string {
	switch {
	case n == 0:
		return "Found no relevant threads in this channel."
	case n == 1:
		return fmt.Sprintf("Found 1 relevant thread about %s (ranked by %s).", strings.Join(topics, ", "), how)
	}
	return fmt.Sprintf("Found %d relevant threads about %s (ranked by %s).", n, strings.Join(topics, ", "), how)
}

// said is a message as the result shows it: "author: text".
func said(m ChannelMessage) string {
	return history.OrUnknown(m.Author) + ": " + Clip(m.Text, maxText)
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

// Render is the prompt section, from the origin's object: its summary,
// the channel overview (the origin passes both, "channel history for
// overview, threads for details"), then the relevant threads as the
// origin formats them, "Thread from [timestamp]: [root message]" and
// "  Reply: [message]".
func Render(platform string, earlier []ChannelMessage, res Result) string {
	tag := strings.ToLower(platform) + "_channel_context"
	var b strings.Builder
	b.WriteString("<" + tag + ">\n" + res.Summary + "\n\nRecent messages in this channel, oldest first:\n")
	for _, m := range earlier[max(0, len(earlier)-overviewMessages):] {
		fmt.Fprintf(&b, "[%s] %s\n", stamp(m.At), said(m))
	}
	if len(res.RelevantThreads) > 0 {
		b.WriteString("\nRelevant threads, most relevant first:\n")
	}
	for _, t := range res.RelevantThreads {
		fmt.Fprintf(&b, "Thread from %s (ts %s): %s\n", stamp(tsTime(t.Timestamp)), t.Timestamp, t.RootMessage)
		if t.RelevanceReason != "" {
			fmt.Fprintf(&b, "  Why relevant: %s\n", Clip(t.RelevanceReason, maxText))
		}
		for _, r := range t.ThreadMessages {
			b.WriteString("  Reply: " + r + "\n")
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

// ChannelMessage is a channel's message as a Source reads it, fetched
// from the platform or read from what weft stored. ID is the platform's
// message id (on some platforms the message's timestamp).
type ChannelMessage struct {
	ID       string
	AuthorID string
	Author   string
	Bot      bool
	Text     string
	At       time.Time
	Edited   bool
	// NoReplies is set when the platform says nobody replied to it in a
	// thread (a reply count of zero), so there is no thread to read.
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
// channel tools' results.
const maxText = 300
