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

// OpenAPI returns the document, for tests that check answers against it
// (apitest); the caller must not modify it.
func OpenAPI() []byte { return openAPI }

// handleOpenAPI serves the document.
func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
}
