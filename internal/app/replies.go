package app

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/mcpserver"
	"github.com/weft-dev/weft/internal/replies"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

// newReplies builds get-thread-replies on the store and, when Discord or
// Slack is on, Discord's REST history and Slack's conversations.replies; its metrics go on reg. The agent tool, the
// REST API and the MCP server all use the one it returns.
func newReplies(store *db.Store, dis *surfacediscord.App, sl *surfaceslack.App, reg prometheus.Registerer, logger *slog.Logger) (*replies.Service, error) {
	cfg := replies.Config{Store: store, Registry: reg, Logger: logger}
	if dis.On() {
		cfg.Discord = surfacediscord.NewReplies(dis.Client())
	}
	if sl.On() {
		cfg.Slack = surfaceslack.NewReplies(sl.Workspaces(), store)
	}
	return replies.New(cfg)
}

// newMCP is the MCP server on the store and get-thread-replies, and its
// streamable HTTP handler for /mcp.
// mcpserver.New names its component itself; the SDK's handler does not.
func newMCP(store *db.Store, rep *replies.Service, logger *slog.Logger) http.Handler {
	s := mcpserver.New(mcpserver.Deps{Store: store, Replies: rep, Logger: logger})
	return mcpserver.Handler(s, logger.With("component", "mcp"))
}
