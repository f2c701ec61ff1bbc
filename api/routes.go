package api

import "github.com/go-chi/chi/v5"

func addRoutes(r chi.Router, d Deps) {
	r.Method("GET", "/healthz", handleHealthz())
	r.Method("GET", "/readyz", handleReadyz(d.Logger, d.DB))
	r.Group(func(r chi.Router) {
		r.Use(requireToken(d.Token))
		r.Method("GET", "/metrics", handleMetrics(d.Metrics))
		// Streamable HTTP: POST carries the client's messages, GET opens the
		// server's event stream, DELETE ends a session.
		mcp := handleMCP(d.MCP)
		r.Method("POST", "/mcp", mcp)
		r.Method("GET", "/mcp", mcp)
		r.Method("DELETE", "/mcp", mcp)
		r.Route("/api/v1", func(r chi.Router) {
			r.Method("GET", "/openapi.json", handleOpenAPI())
			r.Method("GET", "/threads", handleThreadList(d.Logger, d.Store))
			r.Method("POST", "/threads", handleThreadCreate(d.Logger, d.Ingester))
			r.Method("GET", "/threads/{id}", handleThreadGet(d.Logger, d.Store))
			r.Method("GET", "/threads/{id}/stitches", handleStitchList(d.Logger, d.Store))
			r.Method("GET", "/threads/{id}/replies", handleReplies(d.Logger, d.Replies))
			r.Method("POST", "/threads/{id}/abort", handleThreadAbort(d.Logger, d.Ingester, d.Store))
		})
	})
	if d.Mount != nil {
		d.Mount(r)
	}
}
