package mcpclient

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// npmBin is a reference server's command from testdata/npm, which make
// test installs (.ci/deps). Outside CI a missing install skips; under
// CI=true it fails, so a broken install cannot pass unseen.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", name))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (npm ci --prefix internal/mcpclient/testdata/npm): %v", name, err)
		}
		t.Skipf("%s is not installed; make test installs it", name)
	}
	return p
}

func TestReferenceEverythingStdio(t *testing.T) {
	t.Parallel()
	m := running(t, &Config{Servers: map[string]Server{"everything": {Command: npmBin(t, "mcp-server-everything"), Args: []string{"stdio"}}}})
	ts := waitTools(t, m, has("mcp__everything__echo"))
	out, err := call(t, t.Context(), ts, "mcp__everything__echo", `{"message":"hi"}`)
	require.NoError(t, err)
	require.Equal(t, "Echo: hi", out)
	out, err = call(t, t.Context(), ts, "mcp__everything__get-sum", `{"a":2,"b":3}`)
	require.NoError(t, err)
	require.Contains(t, out, "is 5")
	_, err = call(t, t.Context(), ts, "mcp__everything__get-sum", `{"a":"two"}`)
	require.Error(t, err, "arguments the server refuses are a tool error")
}

func TestReferenceEverythingHTTP(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	// An HTTP server is not weft's to start: the test runs it as its own
	// child, stopped at its end.
	cmd := execCommand(t, bin, "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	m := running(t, &Config{Servers: map[string]Server{"everything": {URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"}}})
	ts := waitTools(t, m, has("mcp__everything__echo")) // retried with backoff until it listens
	out, err := call(t, t.Context(), ts, "mcp__everything__echo", `{"message":"over http"}`)
	require.NoError(t, err)
	require.Equal(t, "Echo: over http", out)
}

func TestReferenceFilesystem(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	m := running(t, &Config{Servers: map[string]Server{"fs": {Command: npmBin(t, "mcp-server-filesystem"), Args: []string{dir}}}})
	ts := waitTools(t, m, has("mcp__fs__write_file"))
	byName := map[string]bool{}
	for _, tl := range ts {
		byName[tl.Name] = tl.NeedsApproval
	}
	require.False(t, byName["mcp__fs__read_text_file"], "read-only by its annotations")
	require.True(t, byName["mcp__fs__write_file"], "a write waits for approval")

	file := filepath.Join(dir, "note.txt")
	_, err = call(t, t.Context(), ts, "mcp__fs__write_file", `{"path":"`+file+`","content":"from weft"}`)
	require.NoError(t, err)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "from weft", string(got))
	out, err := call(t, t.Context(), ts, "mcp__fs__read_text_file", `{"path":"`+file+`"}`)
	require.NoError(t, err)
	require.Contains(t, out, "from weft")
	_, err = call(t, t.Context(), ts, "mcp__fs__read_text_file", `{"path":"/etc/passwd"}`)
	require.Error(t, err, "outside its directory is the server's isError")
}
