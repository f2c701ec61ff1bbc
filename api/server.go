// Package api is weft's HTTP surface: health checks, the REST API v1, the
// Prometheus metrics and the MCP endpoint. NewServer builds the router;
// routes.go is the one place a path appears.
//
// Everything but the health checks needs the bearer token WEFT_API_TOKEN,
// compared in constant time. The API fails closed: a missing or wrong token
// is a 401, and with no token configured every protected route answers 503
// (code Unavailable), so an unconfigured replica never serves threads to
// anyone.
//
// Every error is JSON in one vocabulary (httpapi.Code), an unknown route's
// and a wrong method's too; api/openapi.json documents each answer, and the
// tests check every answer against it (apitest).
package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// Pinger checks the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Store is what the REST API reads. *db.Store implements it.
type Store interface {
	threadview.Lister
	threadview.Reader
	Stitches(ctx context.Context, threadID uuid.UUID, p db.StitchPage) ([]thread.Stitch, error)
}

// Ingester is how the REST API writes: threads start and stop through the
// ingest path, like every other inbound event. *ingest.Ingester implements it.
type Ingester interface {
	Builder() *thread.Builder
	StartThread(ctx context.Context, b *thread.Builder) (*thread.Thread, error)
	Abort(ctx context.Context, threadID uuid.UUID, text string) (bool, error)
	Replier
}

// RepliesGetter answers get-thread-replies. *replies.Service implements it.
type RepliesGetter interface {
	Get(ctx context.Context, req replies.Request) (*replies.Response, error)
	GetSlack(ctx context.Context, req replies.SlackRequest) (*replies.SlackResponse, error)
}

var _ Store = (*db.Store)(nil)

// Deps is what the API needs from the rest of weft.
type Deps struct {
	Logger *slog.Logger
	DB     Pinger
	// Token is WEFT_API_TOKEN; empty turns the API off (503).
	Token    string
	Store    Store
	Ingester Ingester
	Replies  RepliesGetter
	// Approvals lists and decides requests for approval.
	Approvals Approvals
	// MCP is the MCP server's streamable HTTP handler, served at /mcp.
	MCP http.Handler
	// Metrics is the registry /metrics exports.
	Metrics prometheus.Gatherer
	// Series counts requests by route; nil counts nothing.
	Series *metrics.Metrics
	// Mount adds routes owned elsewhere (webhooks) to the same router.
	Mount func(r chi.Router)
	// Listen and Live feed GET /api/v1/threads/{id}/events (events.go):
	// Listen opens a connection of the stream's own for its LISTEN. Either
	// nil turns the event streams off (503).
	Listen func(ctx context.Context) (*pgx.Conn, error)
	Live   LiveStore
	// MaxLive bounds the event streams open at once; 0 means 32.
	MaxLive int
}

// NewServer returns weft's HTTP handler.
func NewServer(d Deps) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, httpapi.Log(d.Logger, d.Series), httpapi.Recover(d.Logger))
	// Set before the routes, so the subrouters inherit them: every error
	// is JSON, an unknown route's and a wrong method's too.
	r.NotFound(httpapi.NotFound)
	r.MethodNotAllowed(httpapi.MethodNotAllowed(func(path string) []string { return allowed(r, path) }))
	addRoutes(r, d)
	return r
}

// methods are those a route may serve, in the order Allow lists them.
var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowed lists the methods r routes for path.
func allowed(r chi.Routes, path string) []string {
	var out []string
	for _, m := range methods {
		if r.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}
