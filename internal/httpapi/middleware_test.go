package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// TestRoute checks the label a request gets: the pattern it matched, as
// routes are nested in weft (r.Route, and a router handed a prefix).
func TestRoute(t *testing.T) {
	t.Parallel()
	var got string
	record := func(w http.ResponseWriter, r *http.Request) { got = route(r) }
	inner := chi.NewRouter()
	inner.Post("/webhooks/linear", record)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			got = ""
			next.ServeHTTP(w, req)
			if got == "" {
				got = route(req)
			}
		})
	})
	r.Get("/healthz", record)
	r.Route("/api/v1", func(r chi.Router) { r.Get("/threads/{id}", record) })
	r.Handle("/webhooks/*", inner)
	for path, want := range map[string]string{
		"GET /healthz":                "/healthz",
		"GET /api/v1/threads/1234":    "/api/v1/threads/{id}",
		"POST /webhooks/linear":       "/webhooks/linear",
		"GET /nowhere/7f3a":           unmatched,
		"GET /api/v1/threads/x/other": "/api/v1",
	} {
		method, p, _ := strings.Cut(path, " ")
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, p, nil))
		require.Equal(t, want, got, path)
	}
}
