package api

import "github.com/go-chi/chi/v5"

func addRoutes(r chi.Router, d Deps) {
	r.Method("GET", "/healthz", handleHealthz())
	r.Method("GET", "/readyz", handleReadyz(d.Logger, d.DB))
	if d.Mount != nil {
		d.Mount(r)
	}
}
