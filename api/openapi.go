package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the API's OpenAPI 3 document, written by hand beside the
// routes; TestOpenAPIMatchesRoutes keeps the two in step.
//
//go:embed openapi.json
var openAPI []byte

// handleOpenAPI serves the document.
func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
}
