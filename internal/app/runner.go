package app

import (
	"context"

	"log/slog"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/replies"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// continuers continue conversations in Discord and in Slack; each nil when
// its platform is off.
type continuers struct{ discord, slack *continuation.Continuer }

// newRunner builds the agent that works turns: the model, the tools (memory,
// get-thread-replies, continue_in_discord and continue_in_slack through the
// continuers, and Discord's search tools) and the context providers
// (platform thread history and, with Discord or Slack on, relevant thread
// discovery).
func newRunner(cfg *Config, logger *slog.Logger, store *db.Store, lin *surfacelinear.App, dis *surfacediscord.App, sl *surfaceslack.App,
	rep *replies.Service, c continuers, tel *telemetry) (*agent.Runner, error) {
	provider, err := llm.New(llm.Config{Provider: cfg.LLMProvider, APIKey: cfg.LLMAPIKey, BaseURL: cfg.LLMBaseURL})
	if err != nil {
		return nil, err
	}
	if cfg.WrapModel != nil {
		provider = cfg.WrapModel(provider)
	}
	own := tools.Memory(store)
	own = append(own, dis.Tools(lin.On() || sl.On(), c.discord)...)
	own = append(own, sl.Tools(lin.On() || dis.On(), c.slack)...)
	registry, err := tools.NewRegistry(own...)
	if err != nil {
		return nil, err
	}
	reach := &tenancy.Reach{Store: store, Guilds: cfg.Discord.AllowedGuilds}
	if dis.On() {
		reader := discordReader{dis.Client()}
		reach.Guild = func(ctx context.Context, channelID string) (string, error) {
			ch, err := reader.Channel(ctx, channelID)
			return ch.GuildID, err
		}
	}
	if err := registry.Register(tools.Replies(rep, reach)); err != nil {
		return nil, err
	}
	hist := &history.History{Store: store, TTL: cfg.HistoryTTL, Logger: logger.With("component", "history")}
	if lin.History() != nil {
		hist.Linear = lin.History()
	}
	hist.Discord = dis.History()
	hist.Slack = sl.Backfill()
	contexts := []agent.ContextProvider{hist}
	sources := map[thread.Platform]discovery.Source{}
	if dis.On() {
		src, search := discordContext(dis.Client(), store, provider, cfg.FastModel, cfg.Discord.AllowedGuilds, logger)
		sources[thread.PlatformDiscord] = src
		for _, t := range search {
			if err := registry.Register(t); err != nil {
				return nil, err
			}
		}
	}
	if sl.On() {
		sources[thread.PlatformSlack] = sl.Discovery(store)
	}
	if len(sources) > 0 {
		contexts = append(contexts, newDiscovery(sources, provider, cfg.FastModel, cfg.Discovery, logger))
	}
	return &agent.Runner{LLM: provider, Model: cfg.Model, Tools: registry, MaxSteps: cfg.MaxSteps, RetryWindow: cfg.LLMRetryWindow,
		Context: contexts, Logger: logger.With("component", "agent"), Metrics: tel.metrics, Tracer: tel.tracer,
		Partials: partials(cfg.Stream, store, logger)}, nil
}
