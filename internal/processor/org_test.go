package processor_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// A conversation of an organisation that chose its model and persona is
// answered by that model (another provider here: the fake's Anthropic
// door) opening with that persona, and offered the tools of the servers
// that name it; one of an organisation that chose nothing gets the global
// model, persona and tools, and a call of a tool not offered to it fails.
func TestOrganisationAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var anthropicURL string
	ran := make(chan string, 4)
	h := newHarness(t, func(r *agent.Runner, _ *db.Store) {
		r.Models = func(provider string) (llm.Provider, error) {
			if provider != "anthropic" {
				return nil, errorString("unexpected provider " + provider)
			}
			return llm.New(llm.Config{Provider: provider, BaseURL: anthropicURL, APIKey: "acme-key"})
		}
		require.NoError(t, r.Tools.Register(tools.Tool{Name: "mcp__acme__deploy", Schema: json.RawMessage(`{"type":"object"}`),
			Organisations: []string{"acme"},
			Handler: func(_ context.Context, c tools.Call) (string, error) {
				ran <- c.ThreadID.String()
				return "deployed", nil
			}}))
	})
	anthropicURL = h.llm.AnthropicBaseURL()
	require.NoError(t, h.store.LinkTenants(ctx, "acme", thread.LinearTenant("acme-ws")))
	const persona = "You are Acme's release agent. Answer in one line."
	_, err := h.store.UpdateOrgSettings(ctx, "acme", func(s *thread.OrgSettings) error {
		s.Model, s.Persona = thread.ModelRef{Provider: "anthropic", Name: "claude-acme"}, persona
		return nil
	})
	require.NoError(t, err)

	h.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "user" && strings.Contains(r.Last().Content, "deploy") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__acme__deploy", Arguments: `{}`}}}
		}
		return llmtest.Reply{Text: "done"}
	})
	start := func(workspace, prompt string) *thread.Thread {
		att := dbtest.LinearAttachment()
		att.WorkspaceID = workspace
		th, err := h.ingest.StartThread(ctx, h.ingest.Builder().WithGoal("help").InteractiveLinear(att).
			WithInitialPrompt(thread.Stitch{Content: prompt, Source: thread.PlatformLinear, ExternalID: uuid.NewString()}))
		require.NoError(t, err)
		return th
	}
	acme := start("acme-ws", "please deploy from acme")
	other := start("other-ws", "please deploy from elsewhere")
	h.waitStatus(t, acme.ID, thread.StatusWaiting)
	h.waitStatus(t, other.ID, thread.StatusWaiting)

	first := func(prompt string) []llmtest.Request {
		var out []llmtest.Request
		for _, r := range h.llm.Requests() {
			if len(r.Messages) > 0 && r.Messages[0].Content == prompt {
				out = append(out, r)
			}
		}
		require.NotEmpty(t, out, prompt)
		return out
	}
	for _, r := range first("please deploy from acme") {
		require.Equal(t, "anthropic", r.Protocol)
		require.Equal(t, "claude-acme", r.Model)
		require.Equal(t, "acme-key", r.APIKey)
		require.True(t, strings.HasPrefix(r.System, persona), r.System)
		require.Contains(t, r.Tools, "mcp__acme__deploy")
	}
	for _, r := range first("please deploy from elsewhere") {
		require.Equal(t, "openai", r.Protocol)
		require.Equal(t, "test-model", r.Model)
		require.True(t, strings.HasPrefix(r.System, thread.DefaultPersona), r.System)
		require.NotContains(t, r.System, persona)
		require.NotContains(t, r.Tools, "mcp__acme__deploy")
	}
	// The tool ran for acme only; elsewhere the model was told it has none.
	select {
	case id := <-ran:
		require.Equal(t, acme.ID.String(), id)
	case <-time.After(10 * time.Second):
		t.Fatal("acme's tool never ran")
	}
	require.Empty(t, ran)
	calls := func(id uuid.UUID) []thread.Stitch {
		var out []thread.Stitch
		for _, s := range h.chain(t, id) {
			if s.Type == thread.StitchToolCall && s.Meta().IntentOf == "" {
				out = append(out, s)
			}
		}
		return out
	}
	require.Equal(t, "deployed", calls(acme.ID)[0].Content)
	got := calls(other.ID)
	require.True(t, slices.ContainsFunc(got, func(s thread.Stitch) bool {
		return s.ToolError && strings.Contains(s.Content, `no tool named "mcp__acme__deploy"`)
	}))
	var stitches []thread.Stitch
	for _, s := range h.chain(t, acme.ID) {
		if s.Type == thread.StitchLLMCall {
			stitches = append(stitches, s)
		}
	}
	require.Equal(t, "claude-acme", stitches[0].Model)
}

// An organisation whose model no provider here can build gets a clear
// error in its conversation, and the conversation waits for the next
// message rather than failing for good.
func TestOrganisationModelUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, func(r *agent.Runner, _ *db.Store) {
		r.Models = func(provider string) (llm.Provider, error) {
			return nil, errorString("anthropic is not configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL)")
		}
	})
	_, err := h.store.UpdateOrgSettings(ctx, "linear:org-1", func(s *thread.OrgSettings) error {
		s.Model = thread.ModelRef{Provider: "anthropic", Name: "claude-x"}
		return nil
	})
	require.NoError(t, err)
	th := h.linearThread(t, "hello")
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	chain := h.chain(t, th.ID)
	last := chain[len(chain)-1]
	require.Equal(t, thread.StitchError, last.Type)
	require.Contains(t, last.Content, "anthropic/claude-x")
	require.Contains(t, last.Content, "ANTHROPIC_API_KEY")
	require.Zero(t, h.llm.Calls())
}

type errorString string

func (e errorString) Error() string { return string(e) }
