package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// newDiscovery is relevant thread discovery over the platforms' sources,
// ranking with the fast model (keywords only with a nil fast).
func newDiscovery(sources map[thread.Platform]discovery.Source, fast discovery.FastModel,
	cfg discovery.Config, logger *slog.Logger) *discovery.Discovery {
	return &discovery.Discovery{Sources: sources, Fast: fast, Config: cfg, Logger: logger.With("component", "discovery")}
}

// fastProvider is the fast model's provider: the agent's, unless
// WEFT_FAST_LLM_* name another (wrapped by cfg.WrapModel too).
func fastProvider(cfg *Config, agent llm.Provider) (llm.Provider, error) {
	if cfg.Fast == (FastProvider{}) {
		return agent, nil
	}
	p, err := llm.New(llm.Config{Provider: cfg.Fast.Provider, APIKey: cfg.Fast.APIKey, BaseURL: cfg.Fast.BaseURL})
	if err != nil {
		return nil, fmt.Errorf("fast model: %w", err)
	}
	if cfg.WrapModel != nil {
		p = cfg.WrapModel(p)
	}
	return p, nil
}

// fastModelOf is the fast model as the tools ask it; nil without one.
func fastModelOf(fast llm.Provider, model string) discovery.FastModel {
	return fastModelFor(fast, model, nil)
}

// fastModelFor is fastModelOf, asking instead the fast model of a turn's
// organisation when it chose one, built through orgs; nil without a
// global one.
func fastModelFor(fast llm.Provider, model string, orgs *models) discovery.FastModel {
	if fast == nil {
		return nil
	}
	return fastLLM{p: fast, model: model, models: orgs}
}

// loadDiscoveryConfig reads the origin design's settings:
// MAX_RELEVANT_THREADS, RELEVANCE_SCORE_THRESHOLD, THREAD_FETCH_TIMEOUT_MS,
// and weft's bound on the ranking, RELEVANCE_TIMEOUT_MS.
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
	if ms, err = intEnv(getenv, "RELEVANCE_TIMEOUT_MS", int(discovery.DefaultRankTimeout/time.Millisecond)); err != nil {
		return c, err
	}
	c.RankTimeout = time.Duration(ms) * time.Millisecond
	if v := getenv("RELEVANCE_SCORE_THRESHOLD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return c, fmt.Errorf("RELEVANCE_SCORE_THRESHOLD: %q is not a number above 0 and at most 1", v)
		}
		c.ScoreThreshold = f
	}
	return c, nil
}

// fastMaxTokens caps the fast model's answers: a ranking of ten messages
// or a short summary.
const fastMaxTokens = 2048

// fastLLM is the fast model as the tools ask it: one system prompt, one
// user message, the text back.
type fastLLM struct {
	p     llm.Provider
	model string
	// models builds organisations' fast models (see fastFor); nil asks
	// the global one always.
	models *models
}

var _ discovery.FastModel = fastLLM{}

// Ask implements discovery.FastModel.
func (f fastLLM) Ask(ctx context.Context, system, prompt string) (string, error) {
	p, model, err := f.fastFor(ctx)
	if err != nil {
		return "", err
	}
	resp, err := p.Complete(ctx, llm.Request{Model: model, System: system, MaxTokens: fastMaxTokens,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}})
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}
