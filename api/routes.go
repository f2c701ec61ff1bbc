package api

import (
	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/internal/httpapi"
)

func addRoutes(r chi.Router, d Deps) {
	r.Method("GET", "/healthz", handleHealthz())
	r.Method("GET", "/readyz", handleReadyz(d.Logger, d.DB))
	r.Group(func(r chi.Router) {
		r.Use(requireToken(d.Token), httpapi.RequireJSON)
		r.Method("GET", "/metrics", handleMetrics(d.Metrics))
		// Streamable HTTP, stateless: POST carries the client's messages.
		// There is no session to stream from (GET) or to end (DELETE); they
		// are routed to say so, documented, behind the token.
		r.Method("POST", "/mcp", handleMCP(d.MCP))
		r.Method("GET", "/mcp", handleMCPStateless())
		r.Method("DELETE", "/mcp", handleMCPStateless())
		r.Route("/api/v1", func(r chi.Router) {
			r.Method("GET", "/openapi.json", handleOpenAPI())
			r.Method("GET", "/threads", handleThreadList(d.Logger, d.Store))
			r.Method("POST", "/threads", handleThreadCreate(d.Logger, d.Ingester))
			r.Method("GET", "/threads/{id}", handleThreadGet(d.Logger, d.Store))
			r.Method("GET", "/threads/{id}/stitches", handleStitchList(d.Logger, d.Store))
			r.Method("GET", "/threads/{id}/events", handleThreadEvents(d))
			r.Method("GET", "/threads/{id}/replies", handleReplies(d.Logger, d.Replies))
			r.Method("GET", "/slack/channels/{channel}/threads/{ts}/replies", handleSlackReplies(d.Logger, d.Replies))
			r.Method("POST", "/threads/{id}/abort", handleThreadAbort(d.Logger, d.Ingester, d.Store))
			r.Method("POST", "/threads/{id}/messages", handleThreadMessage(d.Logger, d.Ingester, d.Store))
			r.Method("GET", "/threads/{id}/approvals", handleApprovalList(d.Logger, d.Approvals))
			r.Method("POST", "/threads/{id}/approvals/{approval_id}", handleApprovalDecide(d.Logger, d.Approvals))
		})
	})
	if d.Mount != nil {
		d.Mount(r)
	}
}
