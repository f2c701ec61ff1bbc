package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// engine is what serve and `thread create` share: the store, the processor
// (River) and the ingester that feeds it.
type engine struct {
	store  *db.Store
	proc   *processor.Processor
	ingest *ingest.Ingester
	linear *linearApp
}

// newEngine builds the processor. With workers false it only enqueues.
func newEngine(ctx context.Context, cfg *config, logger *slog.Logger, pool *pgxpool.Pool, store *db.Store, workers bool) (*engine, error) {
	lin, err := newLinearApp(cfg.Linear, store, logger)
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
		registry, err := tools.NewRegistry(tools.Memory(store)...)
		if err != nil {
			return nil, err
		}
		history := &tools.History{Store: store, TTL: cfg.HistoryTTL, Logger: logger.With("component", "history")}
		if lin.history != nil {
			history.Linear = lin.history
		}
		runner = &agent.Runner{LLM: provider, Model: cfg.Model, Tools: registry, MaxSteps: cfg.MaxSteps,
			Context: []agent.ContextProvider{history}, Logger: logger.With("component", "agent")}
	}
	senders := map[thread.Platform]processor.Sender{}
	if lin.sender != nil {
		senders[thread.PlatformLinear] = lin.sender
	}
	proc, err := processor.New(pool, store, runner, senders, processor.Config{
		Workers: workers, TurnWorkers: cfg.TurnWorkers, LeaseTTL: cfg.LeaseTTL, SweepInterval: cfg.SweepInterval,
	}, logger)
	if err != nil {
		return nil, err
	}
	return &engine{store: store, proc: proc, ingest: ingest.New(store, proc.Inserter(), nil, logger), linear: lin}, nil
}

// stop drains the processor within timeout, then cancels what is left.
func (e *engine) stop(ctx context.Context, logger *slog.Logger, timeout time.Duration) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := e.proc.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop processor: %w", err)
	}
	logger.InfoContext(ctx, "processor stopped")
	return nil
}
