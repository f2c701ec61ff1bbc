package api

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weft-dev/weft/internal/httpapi"
)

// handleMetrics exports reg for Prometheus.
func handleMetrics(reg prometheus.Gatherer) http.Handler {
	if reg == nil {
		return unavailable("metrics are not configured")
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// handleMCP serves the MCP endpoint.
func handleMCP(h http.Handler) http.Handler {
	if h == nil {
		return unavailable("the MCP server is not configured")
	}
	return h
}

// handleMCPStateless answers GET and DELETE /mcp: the MCP server is
// stateless, so there is no session stream to open or session to end.
func handleMCPStateless() http.Handler {
	return httpapi.MethodNotAllowed(func(string) []string { return []string{http.MethodPost} })
}

// unavailable answers 503 for a part of the API this replica was built
// without.
func unavailable(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Encode(w, http.StatusServiceUnavailable, httpapi.ErrorBody{
			Error: msg, Code: httpapi.CodeUnavailable, RequestID: httpapi.RequestID(r.Context()),
		})
	})
}
