package app

import (
	"log/slog"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/attachment"
	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// contextual is a platform that adds to the agent's context: a source of
// relevant thread discovery, tools of its own; each nil or empty when the
// platform has none or is off.
type contextual interface {
	surface.Platform
	Context(store *db.Store, fast discovery.FastModel, logger *slog.Logger) (discovery.Source, []tools.Tool)
}

// historied is a platform whose conversations' history goes in the
// prompt; its section is nil when the platform has none to give.
type historied interface {
	surface.Platform
	HistorySection(store *db.Store) history.Section
}

// continuers continue conversations in Discord, in Slack and on GitHub
// issues; each nil when its platform is off.
type continuers struct{ discord, slack, github *continuation.Continuer }

// newRunner builds the agent that works turns: the model, the tools (memory,
// get-thread-replies, continue_in_discord and continue_in_slack through the
// continuers, Discord's search tools and GitHub's issue tools) and the context providers
// (platform thread history and, with Discord or Slack on, relevant thread
// discovery).
func newRunner(cfg *Config, logger *slog.Logger, store *db.Store, platforms []surface.Platform,
	lin *surfacelinear.App, dis *surfacediscord.App, sl *surfaceslack.App,
	rep *replies.Service, c continuers, tel *telemetry) (*agent.Runner, error) {
	provider, err := llm.New(llm.Config{Provider: cfg.LLMProvider, APIKey: cfg.LLMAPIKey, BaseURL: cfg.LLMBaseURL})
	if err != nil {
		return nil, err
	}
	if cfg.WrapModel != nil {
		provider = cfg.WrapModel(provider)
	}
	fast, err := fastProvider(cfg, provider)
	if err != nil {
		return nil, err
	}
	orgs := newModels(cfg, provider)
	fastModel := fastModelFor(fast, cfg.FastModel, orgs)
	own := tools.Memory(store)
	gh := false // GitHub's conversations continue in Discord and Slack too
	for _, p := range platforms {
		gh = gh || (p.Name() == thread.PlatformGitHub && p.Door().On)
	}
	own = append(own, dis.Tools(lin.On() || sl.On() || gh, c.discord)...)
	own = append(own, sl.Tools(lin.On() || dis.On() || gh, c.slack)...)
	if lin.On() || dis.On() || sl.On() {
		own = append(own, surfacegithub.ContinueTool(c.github)...)
	}
	registry, err := tools.NewRegistry(own...)
	if err != nil {
		return nil, err
	}
	reach := &tenancy.Reach{Store: store, Locators: []tenancy.Locator{dis.Locator(store)}}
	if err := registry.Register(replies.Tool(rep, reach)); err != nil {
		return nil, err
	}
	hist := &history.History{Sections: map[thread.Platform]history.Section{}, TTL: cfg.HistoryTTL, Logger: logger.With("component", "history")}
	for _, p := range platforms {
		if ph, ok := p.(historied); ok {
			if s := ph.HistorySection(store); s != nil {
				hist.Sections[p.Name()] = s
			}
		}
	}
	contexts := []agent.ContextProvider{hist}
	sources := map[thread.Platform]discovery.Source{}
	for _, p := range platforms {
		pc, ok := p.(contextual)
		if !ok {
			continue
		}
		src, own := pc.Context(store, fastModel, logger)
		if src != nil {
			sources[p.Name()] = src
		}
		for _, t := range own {
			if err := registry.Register(t); err != nil {
				return nil, err
			}
		}
	}
	if len(sources) > 0 {
		contexts = append(contexts, newDiscovery(sources, fastModel, cfg.Discovery, logger))
	}
	return &agent.Runner{LLM: provider, Model: cfg.Model, Models: orgs.provider, Tools: registry, MaxSteps: cfg.MaxSteps, RetryWindow: cfg.LLMRetryWindow,
		ApprovalTimeout: cfg.ApprovalTimeout,
		Context:         contexts, Logger: logger.With("component", "agent"), Metrics: tel.metrics, Tracer: tel.tracer,
		Partials: partials(cfg.Stream, store, logger, platforms),
		Files:    files(cfg, lin, dis, sl, logger)}, nil
}

// files reads the files people attach, for the platforms that are on:
// Slack's with the workspace's bot token, Linear's uploads with the
// workspace's token, Discord's from its CDN (or the host of
// DISCORD_API_URL, a fake's).
func files(cfg *Config, lin *surfacelinear.App, dis *surfacediscord.App, sl *surfaceslack.App, logger *slog.Logger) *attachment.Fetcher {
	downloaders := map[thread.Platform]attachment.Downloader{}
	if lin.On() && lin.Client() != nil {
		downloaders[thread.PlatformLinear] = lin.Client()
	}
	if dis.On() {
		downloaders[thread.PlatformDiscord] = dis.Files()
	}
	if sl.On() {
		downloaders[thread.PlatformSlack] = sl.Workspaces()
	}
	return attachment.New(cfg.Files, downloaders, logger.With("component", "attachment"))
}
