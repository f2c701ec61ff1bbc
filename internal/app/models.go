package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// ProviderAccess is how a model provider is reached: its variables
// (OPENAI_API_KEY and OPENAI_BASE_URL, ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL), read whichever provider the agent uses, since an
// organisation may choose another (`weft org set`).
type ProviderAccess struct {
	APIKey, BaseURL string
}

// providerEnv names each provider's variables: its key, its base URL.
var providerEnv = map[string][2]string{
	"openai":    {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
	"anthropic": {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
}

func loadProviders(getenv func(string) string) map[string]ProviderAccess {
	out := map[string]ProviderAccess{}
	for name, vars := range providerEnv {
		out[name] = ProviderAccess{APIKey: getenv(vars[0]), BaseURL: getenv(vars[1])}
	}
	return out
}

// models are the providers organisations' models name, each built once
// from its variables (wrapped by cfg.WrapModel); the agent's own provider
// when it is the one named.
type models struct {
	cfg   *Config
	agent llm.Provider // nil: none built yet (weft org set)

	mu    sync.Mutex
	built map[string]llm.Provider
}

func newModels(cfg *Config, agent llm.Provider) *models {
	return &models{cfg: cfg, agent: agent, built: map[string]llm.Provider{}}
}

// provider is the provider named name. Its error says what is missing: a
// provider weft does not know, or one with neither a key nor a base URL.
func (m *models) provider(name string) (llm.Provider, error) {
	if name == m.cfg.LLMProvider && m.agent != nil {
		return m.agent, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.built[name]; ok {
		return p, nil
	}
	vars, ok := providerEnv[name]
	if !ok {
		known := slices.Sorted(maps.Keys(providerEnv))
		return nil, fmt.Errorf("weft knows no model provider %q (it knows %s)", name, strings.Join(known, " and "))
	}
	access := m.cfg.Providers[name]
	if name == m.cfg.LLMProvider {
		access = ProviderAccess{APIKey: m.cfg.LLMAPIKey, BaseURL: m.cfg.LLMBaseURL}
	}
	if access == (ProviderAccess{}) {
		return nil, fmt.Errorf("%s is not configured: set %s (or %s)", name, vars[0], vars[1])
	}
	p, err := llm.New(llm.Config{Provider: name, APIKey: access.APIKey, BaseURL: access.BaseURL})
	if err != nil {
		return nil, err
	}
	if m.cfg.WrapModel != nil {
		p = m.cfg.WrapModel(p)
	}
	m.built[name] = p
	return p, nil
}

// AgentModel is the global model as provider/model; "" without a
// provider.
func (c *Config) AgentModel() string {
	if c.LLMProvider == "" {
		return ""
	}
	return c.LLMProvider + "/" + c.Model
}

// AgentFastModel is the global fast model as provider/model; "" without
// a provider.
func (c *Config) AgentFastModel() string {
	p := cmp.Or(c.Fast.Provider, c.LLMProvider)
	if p == "" {
		return ""
	}
	return p + "/" + c.FastModel
}

// CheckModel reports whether weft, configured as cfg, can build the
// model's provider: `weft org set` refuses a model a turn could not use.
func CheckModel(cfg *Config, m thread.ModelRef) error {
	if _, err := newModels(cfg, nil).provider(m.Provider); err != nil {
		return fmt.Errorf("model %s: %w", m, err)
	}
	return nil
}

// fastFor is the fast model of the turn run with ctx: its organisation's
// when it chose one (agent.WithOrg), else the global one.
func (f fastLLM) fastFor(ctx context.Context) (llm.Provider, string, error) {
	org := agent.OrgOf(ctx)
	if org.FastModel.IsZero() || f.models == nil {
		return f.p, f.model, nil
	}
	p, err := f.models.provider(org.FastModel.Provider)
	if err != nil {
		return nil, "", fmt.Errorf("the fast model %s that organisation %s chose cannot be used: %w", org.FastModel, org.Organisation, err)
	}
	return p, org.FastModel.Name, nil
}
