package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// engine is what serve and `thread create` share: the store, the processor
// (River) and the ingester that feeds it.
type engine struct {
	store  *db.Store
	proc   *processor.Processor
	ingest *ingest.Ingester
	// express sends acknowledgements as they commit, ahead of the queue.
	express *processor.Express
	linear  *linearApp
	discord *discordApp
	// replies is get-thread-replies, for the agent tool, the REST API and
	// MCP.
	replies *replies.Service
	// telemetry is the registry /metrics exports, with its series, and the
	// tracer provider.
	telemetry *telemetry
}

// expressSends bounds the acknowledgements sent at once, outside the job
// queue; past it they wait for the reclaim to hand them to delivery jobs.
const expressSends = 64

// newEngine builds the processor on store's pool. Inbound events are
// written through intake, the pool that webhooks, the gateway and the API
// use, and so are the express sends of their acknowledgements (one
// statement each, since they take no claim), so that a backlog of turns
// never holds the connections an acknowledgement needs (serve gives the two
// their own pools; a command may pass one store twice). With workers false
// it only enqueues.
func newEngine(ctx context.Context, cfg *config, logger *slog.Logger, store, intake *db.Store, workers bool) (*engine, error) {
	lin, err := newLinearApp(cfg.Linear, store, logger)
	if err != nil {
		return nil, err
	}
	dis, err := newDiscordApp(cfg.Discord, store, logger)
	if err != nil {
		return nil, err
	}
	tel, err := newTelemetry(ctx, cfg, intake, logger)
	if err != nil {
		return nil, err
	}
	if err := metrics.WatchShards(tel.registry, dis.shards(), dis.shardsHeld); err != nil {
		return nil, err
	}
	rep, err := newReplies(store, dis, tel.registry, logger)
	if err != nil {
		return nil, err
	}
	var runner *agent.Runner
	if workers {
		provider, err := llm.New(llm.Config{Provider: cfg.LLMProvider, APIKey: cfg.LLMAPIKey, BaseURL: cfg.LLMBaseURL})
		if err != nil {
			return nil, err
		}
		if cfg.LLMProvider == "" {
			// Said once, at start: every turn will record an error stitch.
			logger.WarnContext(ctx, "no LLM provider configured: turns will fail until WEFT_LLM_PROVIDER (openai or anthropic) is set")
		} else {
			logger.InfoContext(ctx, "llm provider", slog.String("provider", cfg.LLMProvider), slog.String("model", cfg.Model), slog.String("fast_model", cfg.FastModel))
		}
		registry, err := tools.NewRegistry(append(tools.Memory(store), dis.tools(lin.sender != nil)...)...)
		if err != nil {
			return nil, err
		}
		reach := &tools.Reach{Store: store, Guilds: cfg.Discord.AllowedGuilds}
		if dis.on() {
			reach.Reader = discordReader{dis.client}
		}
		if err := registry.Register(tools.Replies(rep, reach)); err != nil {
			return nil, err
		}
		history := &tools.History{Store: store, TTL: cfg.HistoryTTL, Logger: logger.With("component", "history")}
		if lin.history != nil {
			history.Linear = lin.history
		}
		history.Discord = dis.history()
		contexts := []agent.ContextProvider{history}
		if dis.on() {
			discovery, search := discordContext(dis.client, store, provider, cfg.FastModel, cfg.Discovery, cfg.Discord.AllowedGuilds, logger)
			contexts = append(contexts, discovery)
			for _, t := range search {
				if err := registry.Register(t); err != nil {
					return nil, err
				}
			}
		}
		runner = &agent.Runner{LLM: provider, Model: cfg.Model, Tools: registry, MaxSteps: cfg.MaxSteps,
			Context: contexts, Logger: logger.With("component", "agent"), Metrics: tel.metrics, Tracer: tel.tracer}
	}
	senders := map[thread.Platform]processor.Sender{}
	if lin.sender != nil {
		senders[thread.PlatformLinear] = lin.sender
	}
	if dis.on() {
		senders[thread.PlatformDiscord] = dis.sender
	}
	proc, err := processor.New(store.Pool(), store, runner, senders, processor.Config{
		Workers: workers, TurnWorkers: cfg.TurnWorkers, LeaseTTL: cfg.LeaseTTL, SweepInterval: cfg.SweepInterval, TurnTimeout: cfg.TurnTimeout,
		OnTurn: dis.onTurn(), Metrics: tel.metrics, Tracer: tel.tracer,
	}, logger)
	if err != nil {
		return nil, err
	}
	ing := ingest.New(intake, proc.Inserter(), nil, logger)
	ing.Observe(tel.metrics, tel.tracer)
	express := proc.Express(intake, expressSends)
	ing.SendAtOnce(express)
	dis.bind(ing)
	return &engine{store: store, proc: proc, ingest: ing, express: express, linear: lin, discord: dis, replies: rep, telemetry: tel}, nil
}

// stop drains the processor within timeout, then cancels what is left.
func (e *engine) stop(ctx context.Context, logger *slog.Logger, timeout time.Duration) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	// The gateway first: its events enqueue turns the processor should see.
	if err := e.discord.stop(stopCtx); err != nil {
		logger.WarnContext(ctx, "stop discord", slog.Any("error", err))
	}
	e.express.Wait()
	if err := e.proc.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop processor: %w", err)
	}
	logger.InfoContext(ctx, "processor stopped")
	if err := e.telemetry.shutdown(stopCtx); err != nil {
		logger.WarnContext(ctx, "flush traces", slog.Any("error", err))
	}
	return nil
}
