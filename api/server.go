// Package api is weft's HTTP surface: health checks now, and the REST API,
// metrics and MCP endpoint as they arrive. NewServer builds the router;
// routes.go is the one place a path appears.
package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/weft-dev/weft/internal/httpapi"
)

// Pinger checks the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps is what the API needs from the rest of weft.
type Deps struct {
	Logger *slog.Logger
	DB     Pinger
	// Mount adds routes owned elsewhere (webhooks) to the same router.
	Mount func(r chi.Router)
}

// NewServer returns weft's HTTP handler.
func NewServer(d Deps) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, httpapi.Log(d.Logger), httpapi.Recover(d.Logger))
	addRoutes(r, d)
	return r
}
