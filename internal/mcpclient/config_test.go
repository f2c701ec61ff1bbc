package mcpclient

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"mcpServers": {
  "github": {"url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"},
    "weft": {"tools": ["get_*"], "approval": "always", "timeout": "30s", "organisations": ["acme"]}},
  "files": {"command": "npx", "args": ["-y", "server", "${DIR:-/tmp}"], "env": {"KEY": "${KEY}"}, "weft": {"timeout": 5}}
}}`), env(map[string]string{"GH_TOKEN": "s3cret", "KEY": "k"}))
	require.NoError(t, err)
	require.Equal(t, []string{"files", "github"}, c.Names())
	gh := c.Servers["github"]
	require.Equal(t, "Bearer s3cret", gh.Headers["Authorization"])
	require.Equal(t, ApprovalAlways, gh.Weft.Approval)
	require.Equal(t, 30*time.Second, gh.Weft.CallTimeout())
	require.True(t, gh.Weft.Offers("get_issue"))
	require.False(t, gh.Weft.Offers("create_issue"))
	f := c.Servers["files"]
	require.Equal(t, []string{"-y", "server", "/tmp"}, f.Args)
	require.Equal(t, "k", f.Env["KEY"])
	require.Equal(t, ApprovalWrites, f.Weft.Approval, "writes is the default")
	require.Equal(t, 5*time.Second, f.Weft.CallTimeout())
	require.True(t, f.Weft.NeedsApproval(false))
	require.False(t, f.Weft.NeedsApproval(true))
	require.Equal(t, DefaultTimeout, Settings{}.CallTimeout())
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"syntax", "{\"mcpServers\": {\n  \"a\": {\"url\": \"x\",}\n}}", "line 2: "},
		{"no servers", `{"servers": {}}`, `no "mcpServers"`},
		{"unknown field", "{\"mcpServers\": {\n\n \"a\": {\"url\": \"x\", \"weft\": {\"aproval\": \"never\"}}}}", `line 3: server "a": json: unknown field "aproval"`},
		{"neither", `{"mcpServers": {"a": {}}}`, `needs "command"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "y"}}}`, `both`},
		{"approval", `{"mcpServers": {"a": {"url": "y", "weft": {"approval": "sometimes"}}}}`, `"approval" "sometimes"`},
		{"timeout", `{"mcpServers": {"a": {"url": "y", "weft": {"timeout": "soon"}}}}`, `"timeout"`},
		{"missing var", `{"mcpServers": {"a": {"url": "y", "headers": {"X": "${NOPE}"}}}}`, `${NOPE} is not set`},
		{"name", `{"mcpServers": {"a__b": {"url": "y"}}}`, `a name is`},
		{"glob", `{"mcpServers": {"a": {"url": "y", "weft": {"tools": ["["]}}}}`, `glob`},
		{"type", `{"mcpServers": {"a": {"url": "y", "type": "sse"}}}`, `"type" "sse"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.in), env(nil))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
