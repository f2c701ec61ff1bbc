// Package mcpserver is weft's MCP server, on the official Go SDK: the tools
// get-thread-replies, list-threads, get-thread and search-threads, served
// over streamable HTTP (mounted at /mcp by package api, behind the API
// token) and over stdio (weft mcp).
//
// The tools answer from the same code as the REST API (package replies), so
// the two never disagree. A failure is a tool error (isError) whose text is
// JSON {"code", "message"} with get-thread-replies' codes; causes stay in
// the logs.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/threadview"
)

// Store is what the thread tools read. *db.Store implements it.
type Store interface {
	threadview.Lister
	threadview.Reader
	SearchStitches(ctx context.Context, s db.StitchSearch) ([]db.SearchHit, error)
}

// RepliesGetter answers get-thread-replies. *replies.Service implements it.
type RepliesGetter interface {
	Get(ctx context.Context, req replies.Request) (*replies.Response, error)
	GetSlack(ctx context.Context, req replies.SlackRequest) (*replies.SlackResponse, error)
}

var _ Store = (*db.Store)(nil)

// Deps is what the server needs.
type Deps struct {
	Store   Store
	Replies RepliesGetter
	Logger  *slog.Logger
	// Version is weft's version, reported at initialization.
	Version string
}

// New returns the MCP server with weft's tools. One server serves every
// session.
func New(d Deps) *mcp.Server {
	logger := d.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	version := d.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "weft", Title: "weft threads", Version: version}, &mcp.ServerOptions{
		Instructions: "Read weft's agent threads: list and search them, read one with its attachments, " +
			"and page through a thread's messages (a weft thread id or a Discord thread id) with get-thread-replies.",
		Logger: logger,
	})
	t := &tools{store: d.Store, replies: d.Replies, logger: logger.With("component", "mcp")}
	t.register(s)
	s.AddReceivingMiddleware(argumentErrors)
	return s
}

// argumentErrors gives the SDK's own tool errors, arguments that do not
// match a tool's input schema, the shape and code of weft's: every tool
// error is JSON {"code", "message"} in the API's one vocabulary.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || isToolError(r) {
			return res, err
		}
		msg := "the arguments do not match the tool's input schema"
		if len(r.Content) == 1 {
			// The SDK's schema validation speaks JSON Schema; its decoding
			// (past validation) would speak Go, and is not shown.
			if tc, ok := r.Content[0].(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, `validating "arguments"`) {
				msg = tc.Text
			}
		}
		return toolError(httpapi.Invalid("%s", msg)), nil
	}
}

// Handler serves s over streamable HTTP. It is stateless: any replica can
// answer any request, as weft's replicas share nothing but Postgres, and
// none of the tools calls back to the client.
func Handler(s *mcp.Server, logger *slog.Logger) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       logger,
		// The bearer token in front of /mcp already stops DNS rebinding (a
		// rebound page cannot know it), and the SDK's localhost check would
		// refuse weft behind a reverse proxy on the same host.
		DisableLocalhostProtection: true,
	})
}
