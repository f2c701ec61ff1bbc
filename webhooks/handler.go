// Package webhooks is weft's inbound HTTP from the platforms: Linear's
// webhook deliveries, and the Linear app's OAuth install flow. A webhook
// handler reads the raw body once, verifies it, parses it, hands it to
// package ingest, and answers; it never calls a platform back on the
// request's path. routes.go is the one place a path appears.
package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/metrics"
)

// Deps is what the handlers need.
type Deps struct {
	Logger   *slog.Logger
	Ingester *ingest.Ingester
	// LinearWebhookSecret is the signing secret of Linear's webhooks
	// (LINEAR_WEBHOOK_SECRET). Empty leaves POST /webhooks/linear off.
	LinearWebhookSecret []byte
	// LinearOAuth enables the install flow; nil leaves it off, as in the
	// single-workspace LINEAR_ACCESS_TOKEN mode.
	LinearOAuth *LinearOAuth
	// SlackOAuth enables /oauth/slack/install and /oauth/slack/callback; nil
	// leaves them off (SLACK_BOT_TOKEN's single workspace).
	SlackOAuth *SlackOAuth
	// Discord enables POST /webhooks/discord (interactions); nil leaves it
	// off, as without DISCORD_PUBLIC_KEY.
	Discord *DiscordInteractions
	// Slack enables POST /webhooks/slack and /webhooks/slack/commands; nil
	// leaves them off, as without SLACK_SIGNING_SECRET.
	Slack *Slack
	// Metrics counts deliveries by outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// Tracer starts each delivery's trace; nil traces nothing.
	Tracer trace.TracerProvider
	// Intake bounds the Linear deliveries worked at once, the rest refused
	// with a 503; nil takes one of DefaultIntakeLimit slots.
	Intake *admission.Intake
}

// Intake defaults: more slots than the intake pool's connections, so a
// delivery's reads and its write overlap others', few enough that the
// admitted ones are answered well within Linear's deadline. A delivery
// slower than IntakeSlow presses the intake, and turns yield.
const (
	DefaultIntakeLimit = 64
	IntakeSlow         = 25 * time.Millisecond
)

func (d Deps) intake() *admission.Intake {
	if d.Intake != nil {
		return d.Intake
	}
	return admission.NewIntake(DefaultIntakeLimit, IntakeSlow)
}

// LinearOAuth is the Linear app's OAuth install flow: where to send an
// admin, and what to do with the code Linear sends back.
type LinearOAuth struct {
	ClientID string
	// RedirectURI is this server's /oauth/linear/callback as Linear knows
	// it; it must equal the one the Codes client was built with.
	RedirectURI string
	// StateSecret signs the state parameter (any server-side secret).
	StateSecret []byte
	// Codes exchanges the callback's code; *linear.OAuthClient.
	Codes CodeExchanger
	// Endpoint is Linear's GraphQL endpoint (linear.DefaultEndpoint), where
	// a new token asks which app user and workspace it belongs to.
	Endpoint   string
	HTTPClient *http.Client // nil: a default client
	// Installations stores the result; *installation.Linear.
	Installations InstallationSaver
}

// CodeExchanger trades an OAuth authorization code for tokens.
type CodeExchanger interface {
	ExchangeCode(ctx context.Context, code string) (*linear.Token, error)
}

// InstallationSaver stores a workspace's installation.
type InstallationSaver interface {
	Save(ctx context.Context, tok *linear.Token, v *linear.Viewer) error
}

// NewHandler returns the webhook and install routes, to be mounted on the
// server's router next to the API.
func NewHandler(d Deps) http.Handler {
	r := chi.NewRouter()
	addRoutes(r, d)
	return r
}
