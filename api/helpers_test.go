package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
)

// token is the API token of the test servers.
const token = "s3cret-token"

type testBundle struct {
	store   *db.Store
	handler http.Handler
	reg     *prometheus.Registry
}

// setup builds the whole API on a fresh database: the real store, an
// ingester whose jobs are written but never worked, get-thread-replies and
// its metrics.
func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := dbtest.NewPool(t)
	logger := logtest.New(t)
	store := db.New(pool, logger)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	svc, err := replies.New(replies.Config{Store: store, Registry: reg, Logger: logger})
	require.NoError(t, err)
	h := api.NewServer(api.Deps{
		Logger: logger, DB: store, Token: token, Store: store, Ingester: ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger}),
		Replies: svc, Metrics: reg, Approvals: &approval.Decider{Store: store, Jobs: rc, Logger: logger},
	})
	return &testBundle{store: store, handler: apitest.Handler(t, h), reg: reg}
}

// do sends a request with the token (and a body, as JSON) and decodes a
// JSON answer into out (when not nil); it returns the status.
func (b *testBundle) do(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	if out != nil {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), out), rec.Body.String())
	}
	return rec.Code
}
