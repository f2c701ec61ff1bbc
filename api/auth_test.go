package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
)

// routes lists every route of h as "METHOD /path", with {id} filled in.
func routes(t *testing.T, h http.Handler) []string {
	t.Helper()
	var out []string
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, method+" "+route)
		return nil
	})
	require.NoError(t, err)
	return out
}

// public are the routes that need no token: probes cannot carry one.
var public = map[string]bool{"GET /healthz": true, "GET /readyz": true}

func TestEveryRouteNeedsTheToken(t *testing.T) {
	t.Parallel()
	// No store or ingester: a request that got past the token would panic
	// into a 500, which the test would see.
	srv := api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{}, Token: token})
	h := apitest.Handler(t, srv)
	off := apitest.Handler(t, api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{}}))

	tests := []struct {
		name    string
		handler http.Handler
		header  string
		status  int
		code    httpapi.Code
	}{
		{"MissingToken", h, "", http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"WrongToken", h, "Bearer " + token + "x", http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"TokenPrefix", h, "Bearer " + token[:len(token)-1], http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"WrongScheme", h, "Basic " + token, http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"BareToken", h, token, http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"EmptyBearer", h, "Bearer ", http.StatusUnauthorized, httpapi.CodeUnauthorized},
		{"NoTokenConfiguredFailsClosed", off, "Bearer ", http.StatusServiceUnavailable, httpapi.CodeUnavailable},
		{"NoTokenConfiguredAnyToken", off, "Bearer anything", http.StatusServiceUnavailable, httpapi.CodeUnavailable},
	}
	all := routes(t, srv)
	require.Greater(t, len(all), 10)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, route := range all {
				if public[route] {
					continue
				}
				method, path, _ := strings.Cut(route, " ")
				req := httptest.NewRequest(method, strings.ReplaceAll(path, "{id}", "0192f1d2-0000-7000-8000-000000000001"), nil)
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				rec := httptest.NewRecorder()
				tt.handler.ServeHTTP(rec, req)
				require.Equal(t, tt.status, rec.Code, route)
				var body httpapi.ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), route)
				require.Equal(t, tt.code, body.Code, route)
				if tt.status == http.StatusUnauthorized {
					require.Equal(t, `Bearer realm="weft"`, rec.Header().Get("WWW-Authenticate"))
				}
			}
		})
	}

	t.Run("HealthNeedsNoToken", func(t *testing.T) {
		t.Parallel()
		for route := range public {
			_, path, _ := strings.Cut(route, " ")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			require.Equal(t, http.StatusOK, rec.Code, route)
		}
	})
}
