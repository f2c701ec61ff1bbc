package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/internal/logtest"
)

type pinger struct{ err error }

func (p pinger) Ping(context.Context) error { return p.err }

func TestHealth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		db     error
		status int
	}{
		{"HealthzAlwaysOK", "/healthz", errors.New("down"), http.StatusOK},
		{"ReadyzDatabaseUp", "/readyz", nil, http.StatusOK},
		{"ReadyzDatabaseDown", "/readyz", errors.New("connection refused"), http.StatusServiceUnavailable},
		{"UnknownPath", "/nope", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := apitest.Handler(t, api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{tt.db}}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			require.Equal(t, tt.status, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		})
	}
}
