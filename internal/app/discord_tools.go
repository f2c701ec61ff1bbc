package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// discordContext builds what Discord adds to the agent's context, on one
// REST client: the source of relevant thread discovery (for mentions in a
// channel) and the five Discord search tools. fast with fastModel is the
// fast model (WEFT_FAST_MODEL) that summarizes; a nil fast leaves no
// summaries. guilds is DISCORD_ALLOWED_GUILDS, which bounds what
// conversations outside Discord may search.
func discordContext(c *discord.Client, store *db.Store, fast llm.Provider, fastModel string,
	guilds []string, logger *slog.Logger) (discovery.Source, []tools.Tool) {
	reader := discordReader{c}
	src := &surfacediscord.DiscordChannels{Reader: reader, Store: store, Post: discoveryNotice(c, logger.With("component", "discovery"))}
	search := &surfacediscord.DiscordSearch{Reader: reader, Store: store, Fast: fastModelOf(fast, fastModel), Guilds: guilds}
	return src, search.Tools()
}

// newDiscovery is relevant thread discovery over the platforms' sources,
// ranking with the fast model (keywords only with a nil fast).
func newDiscovery(sources map[thread.Platform]discovery.Source, fast llm.Provider, fastModel string,
	cfg discovery.Config, logger *slog.Logger) *discovery.Discovery {
	return &discovery.Discovery{Sources: sources, Fast: fastModelOf(fast, fastModel), Config: cfg, Logger: logger.With("component", "discovery")}
}

// fastModelOf is the fast model as the tools ask it; nil without one.
func fastModelOf(fast llm.Provider, model string) discovery.FastModel {
	if fast == nil {
		return nil
	}
	return fastLLM{p: fast, model: model}
}

// loadDiscoveryConfig reads the origin design's settings:
// MAX_RELEVANT_THREADS, RELEVANCE_SCORE_THRESHOLD, THREAD_FETCH_TIMEOUT_MS.
func loadDiscoveryConfig(getenv func(string) string) (discovery.Config, error) {
	c := discovery.Config{ScoreThreshold: discovery.DefaultRelevanceScoreThreshold}
	var err error
	if c.MaxThreads, err = intEnv(getenv, "MAX_RELEVANT_THREADS", discovery.DefaultMaxRelevantThreads); err != nil {
		return c, err
	}
	ms, err := intEnv(getenv, "THREAD_FETCH_TIMEOUT_MS", int(discovery.DefaultThreadFetchTimeout/time.Millisecond))
	if err != nil {
		return c, err
	}
	c.FetchTimeout = time.Duration(ms) * time.Millisecond
	if v := getenv("RELEVANCE_SCORE_THRESHOLD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return c, fmt.Errorf("RELEVANCE_SCORE_THRESHOLD: %q is not a number above 0 and at most 1", v)
		}
		c.ScoreThreshold = f
	}
	return c, nil
}

// discoveryNotice posts discovery's "searching threads" notice in the
// conversation's Discord thread, straight away rather than through the
// outbox: the outbox sends only the conversation to Discord, and the
// notice is only worth anything before the answer. It is urgent: under a
// burst of mentions it is the asker's first sign that an answer is coming.
// Its nonce comes from the mention, so a retried turn does not post it
// twice.
func discoveryNotice(c *discord.Client, logger *slog.Logger) func(context.Context, surfacediscord.DiscoveryNotice) {
	return func(ctx context.Context, n surfacediscord.DiscoveryNotice) {
		if _, err := c.Send(discord.WithPriority(ctx, discord.PriorityUrgent), n.DiscordThreadID, n.Text, "discovery/"+n.MentionID); err != nil {
			logger.WarnContext(ctx, "discovery notice not posted", slog.String("thread_id", n.ThreadID.String()), slog.Any("error", err))
		}
	}
}

// fastMaxTokens caps the fast model's answers: a ranking of ten messages
// or a short summary.
const fastMaxTokens = 2048

// fastLLM is the fast model as the tools ask it: one system prompt, one
// user message, the text back.
type fastLLM struct {
	p     llm.Provider
	model string
}

var _ discovery.FastModel = fastLLM{}

// Ask implements discovery.FastModel.
func (f fastLLM) Ask(ctx context.Context, system, prompt string) (string, error) {
	resp, err := f.p.Complete(ctx, llm.Request{Model: f.model, System: system, MaxTokens: fastMaxTokens,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}})
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

// discordReader adapts *discord.Client to the tools' reader. Discord's
// not-found errors become thread.ErrNotFound, which the tools turn into a
// clear answer for the model.
type discordReader struct{ c *discord.Client }

var _ surfacediscord.DiscordReader = discordReader{}

// Channel implements surfacediscord.DiscordReader.
func (r discordReader) Channel(ctx context.Context, channelID string) (surfacediscord.DiscordChannel, error) {
	ch, err := r.c.Channel(ctx, channelID)
	if err != nil {
		return surfacediscord.DiscordChannel{}, notFound(err)
	}
	return surfacediscord.DiscordChannel{ID: ch.ID, GuildID: ch.GuildID, IsThread: ch.IsThread}, nil
}

// MessagesBefore implements surfacediscord.DiscordReader.
func (r discordReader) MessagesBefore(ctx context.Context, channelID, beforeID string, limit int) ([]discovery.ChannelMessage, error) {
	msgs, err := r.c.MessagesBefore(ctx, channelID, beforeID, limit)
	return channelMessages(msgs), notFound(err)
}

// MessagesAfter implements surfacediscord.DiscordReader.
func (r discordReader) MessagesAfter(ctx context.Context, channelID, afterID string, limit int) ([]discovery.ChannelMessage, error) {
	msgs, err := r.c.Messages(ctx, channelID, afterID, limit)
	return channelMessages(msgs), notFound(err)
}

// Message implements surfacediscord.DiscordReader.
func (r discordReader) Message(ctx context.Context, channelID, messageID string) (discovery.ChannelMessage, error) {
	m, err := r.c.Message(ctx, channelID, messageID)
	if err != nil {
		return discovery.ChannelMessage{}, notFound(err)
	}
	return channelMessage(m), nil
}

func channelMessages(msgs []discord.Message) []discovery.ChannelMessage {
	out := make([]discovery.ChannelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = channelMessage(m)
	}
	return out
}

func channelMessage(m discord.Message) discovery.ChannelMessage {
	return discovery.ChannelMessage{ID: m.ID, AuthorID: m.Author.ID, Author: m.Author.Name, Bot: m.Author.Bot,
		Text: m.Content, At: m.Timestamp, Edited: !m.EditedAt.IsZero()}
}

// notFound marks Discord's 404s (unknown channel, message) as
// thread.ErrNotFound, keeping the Discord error.
func notFound(err error) error {
	var de *surface.Error
	if errors.As(err, &de) && de.Kind == surface.KindNotFound {
		return fmt.Errorf("%w: %w", thread.ErrNotFound, err)
	}
	return err
}
