package app

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
)

// TestServeDebug: WEFT_DEBUG_ADDR serves a heap profile on its own
// listener, and nothing when unset.
func TestServeDebug(t *testing.T) {
	cfg, err := LoadConfig(env(map[string]string{"WEFT_DEBUG_ADDR": "127.0.0.1:0"}))
	require.NoError(t, err)
	a := &App{cfg: cfg, logger: logtest.New(t)}
	addr, stop, err := a.serveDebug(t.Context())
	require.NoError(t, err)
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "heap profile")

	cfg, err = LoadConfig(env(nil))
	require.NoError(t, err)
	addr, stop, err = (&App{cfg: cfg, logger: logtest.New(t)}).serveDebug(t.Context())
	require.NoError(t, err)
	stop()
	require.Empty(t, addr)
}
