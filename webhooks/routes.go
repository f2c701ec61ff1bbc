package webhooks

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/weft-dev/weft/internal/tracing"
)

// Webhook load shedding. Past Limit requests in flight, up to BacklogLimit
// wait at most BacklogTimeout for a slot and the rest get a fast 503,
// which Linear retries: far better than answering after its 5 s deadline
// once the database's connections are all busy.
const (
	webhookLimit          = 64
	webhookBacklogLimit   = 1024
	webhookBacklogTimeout = 500 * time.Millisecond
)

func addRoutes(r chi.Router, d Deps) {
	// The doors' log lines (internal/app) say at info what is off and why.
	logger := d.Logger.With("component", "webhooks")
	tracer := tracing.Tracer(d.Tracer)
	if len(d.LinearWebhookSecret) > 0 {
		shed := middleware.ThrottleWithOpts(middleware.ThrottleOpts{
			Limit: webhookLimit, BacklogLimit: webhookBacklogLimit, BacklogTimeout: webhookBacklogTimeout,
			StatusCode:   http.StatusServiceUnavailable,
			RetryAfterFn: func(bool) time.Duration { return time.Second },
		})
		r.With(countEvents(d.Metrics, tracer, "linear"), bufferBody(logger), shed).Method(http.MethodPost, "/webhooks/linear", handleLinearWebhook(logger, tracer, d.Ingester, d.LinearWebhookSecret))
	} else {
		logger.Debug("linear webhooks off: no webhook signing secret")
	}
	if d.Discord != nil {
		r.With(countEvents(d.Metrics, tracer, "discord")).Method(http.MethodPost, "/webhooks/discord", handleDiscordInteraction(logger, d.Ingester, d.Discord))
	} else {
		logger.Debug("discord interactions off: no public key")
	}
	if d.Slack != nil {
		r.With(countEvents(d.Metrics, tracer, "slack"), bufferBody(logger)).Method(http.MethodPost, "/webhooks/slack", handleSlackEvents(logger, d.Slack))
		r.With(countEvents(d.Metrics, tracer, "slack"), bufferBody(logger)).Method(http.MethodPost, "/webhooks/slack/commands", handleSlackCommand(logger, d.Slack))
	} else {
		logger.Debug("slack events off: no signing secret or bot token")
	}
	if o := d.LinearOAuth; o != nil {
		r.Method(http.MethodGet, "/oauth/linear/install", handleLinearInstall(logger, o))
		r.Method(http.MethodGet, "/oauth/linear/callback", handleLinearCallback(logger, o))
	} else {
		logger.Debug("linear oauth install off: no client credentials")
	}
	if o := d.SlackOAuth; o != nil {
		r.Method(http.MethodGet, "/oauth/slack/install", handleSlackInstall(logger, o))
		r.Method(http.MethodGet, "/oauth/slack/callback", handleSlackCallback(logger, o))
	}
}
