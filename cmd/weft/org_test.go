package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

func TestOrgSetShowListUnset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	mcp := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(mcp, []byte(`{"mcpServers": {
		"everyone": {"url": "http://127.0.0.1:1/mcp"},
		"deploys": {"url": "http://127.0.0.1:1/mcp", "weft": {"organisations": ["acme"]}}}}`), 0o600))
	persona := filepath.Join(dir, "persona.md")
	require.NoError(t, os.WriteFile(persona, []byte("  You are Acme's agent.\nAnswer briefly.\n"), 0o600))
	empty := filepath.Join(dir, "empty.md")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	e := env(map[string]string{"DATABASE_URL": dbtest.URL(t), "WEFT_LOG_LEVEL": "error", "WEFT_MCP_CONFIG": mcp,
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "WEFT_MODEL": "gpt-4o", "ANTHROPIC_API_KEY": "a"})
	org := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"weft", "org"}, args...), e, &out, &bytes.Buffer{})
		return out.String(), err
	}
	out, err := org("list")
	require.NoError(t, err)
	require.Contains(t, out, "No organisation is named yet")

	err = run(ctx, []string{"weft", "tenant", "link", "acme", "linear:org-1"}, e, &bytes.Buffer{}, &bytes.Buffer{})
	require.NoError(t, err)
	out, err = org("set", "acme", "--model", "anthropic/claude-sonnet-4-5", "--persona-file", persona)
	require.NoError(t, err)
	require.Contains(t, out, "Settings of acme saved.")
	out, err = org("set", "acme", "--fast-model", "openai/meta-llama/Llama-3-8B")
	require.NoError(t, err, out)
	out, err = org("show", "acme")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^Tenants: +linear:org-1$`, out)
	require.Regexp(t, `(?m)^Model: +anthropic/claude-sonnet-4-5$`, out)
	require.Regexp(t, `(?m)^Fast model: +openai/meta-llama/Llama-3-8B$`, out)
	require.Regexp(t, `(?m)^MCP servers: +deploys, everyone$`, out)
	require.Contains(t, out, "Persona:      \n  You are Acme's agent.\n  Answer briefly.\n")

	// A tenant's own organisation, never linked, may have settings too.
	_, err = org("set", "discord:100000000000000001", "--model", "openai/gpt-4o-mini")
	require.NoError(t, err)
	out, err = org("list")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^acme +anthropic/claude-sonnet-4-5 +openai/meta-llama/Llama-3-8B +You are Acme's agent\. Answer briefly\. +deploys,everyone +linear:org-1$`, out)
	require.Regexp(t, `(?m)^discord:100000000000000001 +openai/gpt-4o-mini +openai/gpt-4o-mini \(global\) +\(global\) +everyone +-$`, out)

	out, err = org("unset", "acme", "--persona")
	require.NoError(t, err)
	require.Contains(t, out, "Settings of acme saved.")
	out, err = org("show", "acme")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^Persona: +\(global\)$`, out)
	out, err = org("unset", "discord:100000000000000001")
	require.NoError(t, err)
	require.Contains(t, out, "discord:100000000000000001 is on the global settings.")
	out, err = org("show", "discord:100000000000000001")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^Model: +openai/gpt-4o \(global\)$`, out)
	require.Regexp(t, `(?m)^Set: +never$`, out)
	out, err = org("list")
	require.NoError(t, err)
	require.NotContains(t, out, "discord:100000000000000001")

	for _, bad := range [][]string{{}, {"set", "acme"}, {"set"}, {"show"}, {"list", "x"}, {"rename", "acme"}, {"set", "acme", "--colour", "red"}, {"unset", "acme", "x"}} {
		_, err := org(bad...)
		require.ErrorIs(t, err, errUsage, "%v", bad)
	}
	for bad, says := range map[string]string{
		"nope/some-model":   `weft knows no model provider "nope" (it knows anthropic and openai)`,
		"claude-sonnet-4-5": "a model is provider/model",
		"anthropic/":        "a model is provider/model",
	} {
		_, err := org("set", "acme", "--model", bad)
		require.ErrorContains(t, err, says, bad)
		require.NotErrorIs(t, err, errUsage)
	}
	for _, bad := range [][]string{{"set", "Not Valid", "--model", "openai/x"}, {"show", "teams:1"}, {"set", "acme", "--persona-file", empty},
		{"set", "acme", "--persona-file", filepath.Join(dir, "missing")}} {
		_, err := org(bad...)
		require.Error(t, err, "%v", bad)
		require.NotErrorIs(t, err, errUsage, "%v", bad)
	}
	out, err = org("show", "acme")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^Model: +anthropic/claude-sonnet-4-5$`, out, "a refused set changes nothing")

	// A provider this configuration holds no key or URL for is refused:
	// a turn could not call it.
	e2 := env(map[string]string{"DATABASE_URL": dbtest.URL(t), "WEFT_LOG_LEVEL": "error", "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k"})
	err = run(ctx, []string{"weft", "org", "set", "acme", "--model", "anthropic/claude-sonnet-4-5"}, e2, &bytes.Buffer{}, &bytes.Buffer{})
	require.EqualError(t, err, "model anthropic/claude-sonnet-4-5: anthropic is not configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL)")
	require.True(t, strings.Contains(usages["org"], "weft org set ORG"))
}
