package webhooks

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/tracing"
)

func addRoutes(r chi.Router, d Deps) {
	// The doors' log lines (internal/app) say at info what is off and why.
	logger := d.Logger.With("component", "webhooks")
	tracer := tracing.Tracer(d.Tracer)
	if len(d.LinearWebhookSecret) > 0 {
		r.With(countEvents(d.Metrics, tracer, "linear"), webhook.BufferBody(logger), admit(d.intake())).Method(http.MethodPost, "/webhooks/linear", handleLinearWebhook(logger, tracer, d.Ingester, d.LinearWebhookSecret))
	} else {
		logger.Debug("linear webhooks off: no webhook signing secret")
	}
	if d.Discord != nil {
		r.With(countEvents(d.Metrics, tracer, "discord")).Method(http.MethodPost, "/webhooks/discord", handleDiscordInteraction(logger, d.Ingester, d.Discord))
	} else {
		logger.Debug("discord interactions off: no public key")
	}
	if d.Slack != nil {
		r.With(countEvents(d.Metrics, tracer, "slack"), webhook.BufferBody(logger)).Method(http.MethodPost, "/webhooks/slack", handleSlackEvents(logger, d.Slack))
		r.With(countEvents(d.Metrics, tracer, "slack"), webhook.BufferBody(logger)).Method(http.MethodPost, "/webhooks/slack/commands", handleSlackCommand(logger, d.Slack))
	} else {
		logger.Debug("slack events off: no signing secret or bot token")
	}
	if o := d.LinearOAuth; o != nil {
		f := linearFlow(logger, o)
		r.Method(http.MethodGet, f.Path()+"/install", f.Install())
		r.Method(http.MethodGet, f.Path()+"/callback", f.Callback())
	} else {
		logger.Debug("linear oauth install off: no client credentials")
	}
	if o := d.SlackOAuth; o != nil {
		f := slackFlow(logger, o)
		r.Method(http.MethodGet, f.Path()+"/install", f.Install())
		r.Method(http.MethodGet, f.Path()+"/callback", f.Callback())
	}
}

// admit works a delivery only when in has a slot for it, and refuses it
// at once otherwise: a 503 with Retry-After, which Linear retries, rather
// than a wait that would take its answer past Linear's deadline.
func admit(in *admission.Intake) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			done, ok := in.Admit()
			if !ok {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "over capacity, retry shortly", http.StatusServiceUnavailable)
				return
			}
			defer done()
			next.ServeHTTP(w, r)
		})
	}
}
