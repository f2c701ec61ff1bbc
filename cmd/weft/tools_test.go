package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

func TestToolsCheck(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	s.AddTool(&mcp.Tool{Name: "create", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := write("good.json", `{"mcpServers": {"api": {"url": "${API}"}}}`)
	both := write("both.json", `{"mcpServers": {"api": {"url": "${API}"}, "gone": {"command": "`+filepath.Join(dir, "nothing")+`"}}}`)

	env := map[string]string{"API": ts.URL, "WEFT_MCP_CONFIG": good}
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"weft", "tools", "check"}, func(k string) string { return env[k] }, &out, &errOut))
	require.Regexp(t, `mcp__api__lookup\s+runs at once`, out.String())
	require.Regexp(t, `mcp__api__create\s+waits for approval`, out.String())

	env["WEFT_MCP_CONFIG"] = both
	out.Reset()
	err := run(t.Context(), []string{"weft", "tools", "check"}, func(k string) string { return env[k] }, &out, &errOut)
	require.EqualError(t, err, "tools check: mcp servers failed: gone")
	require.Contains(t, out.String(), "gone: FAILED")

	require.ErrorIs(t, run(t.Context(), []string{"weft", "tools", "list"}, func(k string) string { return env[k] }, &out, &errOut), errUsage)
}
