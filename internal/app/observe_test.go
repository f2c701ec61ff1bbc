package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/servetest"
)

// TestMetricsAddrOnEveryRole: WEFT_METRICS_ADDR serves /metrics (without
// the API token, which guards WEFT_ADDR's), /healthz and /readyz on a
// worker, which serves nothing on WEFT_ADDR, and on an api replica.
func TestMetricsAddrOnEveryRole(t *testing.T) {
	t.Parallel()
	for _, role := range []string{"worker", "api"} {
		t.Run(role, func(t *testing.T) {
			t.Parallel()
			addr, metricsAddr := servetest.Addr(t), servetest.Addr(t)
			ctx, cancel := context.WithCancel(context.Background())
			var stderr bytes.Buffer
			done := make(chan error, 1)
			go func() {
				done <- runServe(ctx, env(map[string]string{
					"DATABASE_URL": dbtest.URL(t), "WEFT_ROLE": role, "WEFT_API_TOKEN": "secret-token",
					"WEFT_ADDR": addr, "WEFT_METRICS_ADDR": metricsAddr,
				}), &stderr)
			}()
			base := "http://" + metricsAddr
			servetest.WaitReady(t, base)

			get := func(url string) (int, string) {
				resp, err := http.Get(url)
				require.NoError(t, err)
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp.StatusCode, string(body)
			}
			code, body := get(base + "/healthz")
			require.Equal(t, http.StatusOK, code)
			require.JSONEq(t, `{"status":"ok"}`, body)
			code, body = get(base + "/readyz")
			require.Equal(t, http.StatusOK, code)
			require.JSONEq(t, `{"status":"ok","database":"ok"}`, body)
			code, body = get(base + "/metrics")
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, body, "go_goroutines")
			require.Contains(t, body, "weft_outbox_backlog")

			if role == "worker" {
				_, err := http.Get("http://" + addr + "/healthz")
				require.Error(t, err, "a worker serves nothing on WEFT_ADDR")
			} else {
				code, _ = get("http://" + addr + "/metrics")
				require.Equal(t, http.StatusUnauthorized, code, "WEFT_ADDR's /metrics keeps its token")
			}

			cancel()
			select {
			case err := <-done:
				require.NoError(t, err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not stop")
			}
			require.Contains(t, stderr.String(), `"msg":"weft serving metrics and probes"`)
		})
	}
}
