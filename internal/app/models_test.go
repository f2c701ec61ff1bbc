package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
)

// The fast model of a turn is its organisation's when it chose one, at
// that model's provider; the global one otherwise, or when the
// organisation chose only a model.
func TestFastModelOfTheTurnsOrganisation(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	global, err := llm.New(llm.Config{Provider: "openai", APIKey: "o", BaseURL: fake.OpenAIBaseURL()})
	require.NoError(t, err)
	cfg := &Config{LLMProvider: "openai", Providers: map[string]ProviderAccess{
		"anthropic": {APIKey: "a", BaseURL: fake.AnthropicBaseURL()},
	}}
	fast := fastModelFor(global, "global-fast", newModels(cfg, global))
	acme := thread.OrgSettings{Organisation: "acme", FastModel: thread.ModelRef{Provider: "anthropic", Name: "acme-fast"}}
	modelOnly := thread.OrgSettings{Organisation: "globex", Model: thread.ModelRef{Provider: "anthropic", Name: "big"}}
	for _, c := range []struct {
		ctx                  context.Context
		protocol, model, key string
	}{
		{context.Background(), "openai", "global-fast", "o"},
		{agent.WithOrg(context.Background(), acme), "anthropic", "acme-fast", "a"},
		{agent.WithOrg(context.Background(), modelOnly), "openai", "global-fast", "o"},
	} {
		_, err := fast.Ask(c.ctx, "rank", "these")
		require.NoError(t, err)
		reqs := fake.Requests()
		last := reqs[len(reqs)-1]
		require.Equal(t, []string{c.protocol, c.model, c.key}, []string{last.Protocol, last.Model, last.APIKey})
	}
	_, err = fast.Ask(agent.WithOrg(context.Background(), thread.OrgSettings{Organisation: "x",
		FastModel: thread.ModelRef{Provider: "mistral", Name: "m"}}), "rank", "these")
	require.EqualError(t, err, `the fast model mistral/m that organisation x chose cannot be used: weft knows no model provider "mistral" (it knows anthropic and openai)`)
}

// A provider is built once, from its own variables; the agent's is the
// agent's own provider; one without a key or a URL is refused, and so is
// one weft does not know.
func TestModelsProviders(t *testing.T) {
	t.Parallel()
	agentP, err := llm.New(llm.Config{Provider: "openai", APIKey: "o"})
	require.NoError(t, err)
	cfg := &Config{LLMProvider: "openai", Providers: map[string]ProviderAccess{"anthropic": {APIKey: "a"}}}
	m := newModels(cfg, agentP)
	p, err := m.provider("openai")
	require.NoError(t, err)
	require.Same(t, agentP, p)
	a1, err := m.provider("anthropic")
	require.NoError(t, err)
	a2, err := m.provider("anthropic")
	require.NoError(t, err)
	require.Same(t, a1, a2)
	require.Equal(t, "anthropic", a1.Name())

	for cfg, want := range map[*Config]string{
		{LLMProvider: "openai", Providers: map[string]ProviderAccess{}}: "model anthropic/c: anthropic is not configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL)",
		{LLMProvider: "anthropic", LLMAPIKey: "k"}:                      "",
	} {
		err := CheckModel(cfg, thread.ModelRef{Provider: "anthropic", Name: "c"})
		if want == "" {
			require.NoError(t, err)
		} else {
			require.EqualError(t, err, want)
		}
	}
	require.EqualError(t, CheckModel(&Config{}, thread.ModelRef{Provider: "gemini", Name: "g"}),
		`model gemini/g: weft knows no model provider "gemini" (it knows anthropic and openai)`)
}

// Every provider's variables are read, whichever the agent uses.
func TestLoadConfigReadsEveryProvider(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://claude.test"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, ProviderAccess{APIKey: "a", BaseURL: "http://claude.test"}, cfg.Providers["anthropic"])
	require.Equal(t, ProviderAccess{APIKey: "o"}, cfg.Providers["openai"])
}
