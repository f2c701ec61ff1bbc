package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// everythingBin is the reference server @modelcontextprotocol/server-everything
// as make test installs it (.ci/deps); outside CI a missing install skips.
func everythingBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "mcpclient", "testdata", "npm", "node_modules", ".bin", "mcp-server-everything"))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mcp-server-everything is not installed (npm ci --prefix internal/mcpclient/testdata/npm): %v", err)
		}
		t.Skip("mcp-server-everything is not installed; make test installs it")
	}
	return p
}

// TestMCPImageReachesTheModel has `weft serve` call the reference
// server's get-tiny-image over stdio, with each provider's adapter: the
// model provider (the fake, reading the wire as the provider does) gets
// the PNG itself. Anthropic takes it inside the tool_result; a chat
// completion's tool message takes only text, so there the tool message
// says it is attached and a user message right after the results carries
// it. A later model call of the turn sends it again, read from the stitch.
func TestMCPImageReachesTheModel(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			dbURL := dbtest.URL(t)
			cfg := filepath.Join(t.TempDir(), "mcp.json")
			conf, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{
				"command": bin, "args": []string{"stdio"}, "weft": map[string]any{"tools": []string{"get-tiny-image", "echo"}, "approval": "never"}}}})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cfg, conf, 0o600))
			fake := llmtest.NewServer(t)
			fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
				switch res := toolResults(r); len(res) {
				case 0:
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__everything__get-tiny-image", Arguments: `{}`}}}
				case 1:
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__everything__echo", Arguments: `{"message":"seen"}`}}}
				default:
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"a logo"}`}}}
				}
			})
			env := map[string]string{"DATABASE_URL": dbURL, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": provider,
				"WEFT_MCP_CONFIG": cfg}
			if provider == "openai" {
				env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = "k", fake.OpenAIBaseURL()
			} else {
				env["ANTHROPIC_API_KEY"], env["ANTHROPIC_BASE_URL"] = "k", fake.AnthropicBaseURL()
			}
			store, pool, err := Open(context.Background(), &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
			require.NoError(t, err)
			defer pool.Close()
			weft := startWeft(t, env)
			weft.waitLogged(t, "mcp server connected")
			th := createThread(t, dbURL, "Show me the logo")
			done := waitFinished(t, store, th)
			require.Equal(t, thread.StatusCompleted, done.Status)

			reqs := fake.Requests()
			require.Len(t, reqs, 3)
			for _, r := range reqs[1:] {
				var images []llmtest.Image
				var text string
				for _, m := range r.Messages {
					switch {
					case m.Role == "tool" && strings.Contains(m.Content, "Here's the image you requested"):
						text = m.Content
						if provider == "anthropic" {
							images = m.Images
						}
					case m.Role == "user" && len(m.Images) > 0 && provider == "openai":
						images = m.Images
					}
				}
				require.Contains(t, text, "[image image/png, ")
				require.Contains(t, text, "bytes, attached]\nThe image above is the MCP logo.")
				require.Len(t, images, 1, "the provider got the image")
				require.Equal(t, "image/png", images[0].MediaType)
				require.True(t, bytes.HasPrefix(images[0].Data, []byte("\x89PNG\r\n\x1a\n")), "the image's bytes, decoded")
			}
		})
	}
}
