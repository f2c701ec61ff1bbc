package app

import (
	"log/slog"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/replies"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// continuers continue conversations in Discord and in Slack; each nil when
// its platform is off.
type continuers struct{ discord, slack *tools.Continuer }

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
	own := tools.Memory(store)
	own = append(own, dis.Tools(lin.On() || sl.On(), c.discord)...)
	own = append(own, sl.Tools(lin.On() || dis.On(), c.slack)...)
	registry, err := tools.NewRegistry(own...)
	if err != nil {
		return nil, err
	}
	reach := &tools.Reach{Store: store, Guilds: cfg.Discord.AllowedGuilds}
	if dis.On() {
		reach.Reader = discordReader{dis.Client()}
	}
	if err := registry.Register(tools.Replies(rep, reach)); err != nil {
		return nil, err
	}
	history := &tools.History{Store: store, TTL: cfg.HistoryTTL, Logger: logger.With("component", "history")}
	if lin.History() != nil {
		history.Linear = lin.History()
	}
	history.Discord = dis.History()
	history.Slack = sl.Backfill()
	contexts := []agent.ContextProvider{history}
	sources := map[thread.Platform]tools.DiscoverySource{}
	if dis.On() {
		discovery, search := discordContext(dis.Client(), store, provider, cfg.FastModel, cfg.Discord.AllowedGuilds, logger)
		sources[thread.PlatformDiscord] = discovery
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
		Context: contexts, Logger: logger.With("component", "agent"), Metrics: tel.metrics, Tracer: tel.tracer}, nil
}
