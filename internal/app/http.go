package app

import (
	"cmp"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/internal/console"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/webhooks"
)

// newHandler is weft's HTTP surface: the API's router, with the webhooks,
// the console and the home page mounted on it. webhooks, api and mcpserver name their
// log component themselves.
func (a *App) newHandler(rep *replies.Service, c continuers) http.Handler {
	var elsewhere []surfacediscord.Describer
	for _, p := range a.platforms {
		if d, ok := p.(surface.Describing); ok && p.Name() != thread.PlatformDiscord {
			elsewhere = append(elsewhere, d)
		}
	}
	a.discord.Serve(a.intake, c.discord, a.ingest, elsewhere)
	a.slack.Serve(a.slackOAuth)
	hooks := webhooks.NewHandler(webhooks.Deps{Logger: a.logger, Recorder: a.ingest, Platforms: a.platforms,
		Metrics: a.telemetry.metrics, Tracer: a.telemetry.tracer, Intake: a.admitted})
	// The console's live view LISTENs: on the direct connection, if any.
	listen := a.intakePool
	if a.directPool != nil {
		listen = a.directPool
	}
	cons := console.New(console.Deps{Logger: a.logger.With("component", "console"), Token: a.cfg.APIToken,
		Store: a.intake, Aborter: a.ingest, Approvals: a.approvals, Listen: console.Connector(listen),
		Agent: console.Agent{Model: a.cfg.AgentModel(), FastModel: a.cfg.AgentFastModel(),
			Persona: cmp.Or(a.cfg.Persona, thread.DefaultPersona), Servers: a.cfg.MCP.ServersFor}})
	return api.NewServer(api.Deps{
		Logger: a.logger.With("component", "http"), DB: a.intake, Token: a.cfg.APIToken,
		Store: a.intake, Ingester: a.ingest, Replies: rep, MCP: newMCP(a.store, rep, a.logger), Approvals: a.approvals,
		Metrics: a.telemetry.registry, Series: a.telemetry.metrics,
		Listen: console.Connector(listen), Live: a.intake,
		Mount: func(r chi.Router) {
			r.Handle("/webhooks/*", hooks)
			r.Handle("/oauth/*", hooks)
			r.Method(http.MethodGet, "/", handleHome())
			cons.Mount(r)
		},
	})
}

// home is what a browser pointed at weft sees: where to go next.
const home = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>weft</title>
<h1>weft</h1>
<p>weft runs AI agents across Linear, Discord, Slack and GitHub on one Postgres store of threads.</p>
<ul>
<li><a href="/console">/console</a>: the operator console (needs WEFT_API_TOKEN)</li>
<li><a href="/healthz">/healthz</a>: whether the process is up (<a href="/readyz">/readyz</a>: and its database)</li>
<li><a href="/api/v1/openapi.json">/api/v1/openapi.json</a>: the REST API, as OpenAPI 3 (bearer token WEFT_API_TOKEN)</li>
</ul>
`

func handleHome() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		_, _ = w.Write([]byte(home))
	})
}
