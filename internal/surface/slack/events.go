package slack

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
)

// Doors serve Slack's Events API (POST /webhooks/slack), the /weft
// slash command (POST /webhooks/slack/commands), interactivity (POST
// /webhooks/slack/interactions: buttons clicked) and, with OAuth, the
// app's install flow.
type Doors struct {
	// SigningSecret verifies every request (SLACK_SIGNING_SECRET).
	SigningSecret string
	// Events records a verified event body; *slackapi.Conversations.
	Events EventHandler
	// Commands are /weft's subcommands by name ("continue"): the text after
	// the name goes to its handler. Unknown names get the usage.
	Commands map[string]CommandHandler
	// AllowedTeam says whether a workspace may use weft
	// (SLACK_ALLOWED_TEAMS); nil allows any. A command from another is
	// answered with a refusal and runs nothing.
	AllowedTeam func(teamID string) bool
	// Actions are the handlers of block actions by action_id prefix
	// (Interactivity.Actions); nil handles none, acknowledging them.
	Actions map[string]ActionHandler
	// OAuth enables /oauth/slack/install and /oauth/slack/callback; nil
	// leaves them off (SLACK_BOT_TOKEN's single workspace).
	OAuth *OAuth
}

// Routes mounts the events, command and interactivity routes (counted,
// buffered) when SigningSecret is set, and the install flow when OAuth is.
func (s *Doors) Routes(r chi.Router, m surface.Mount) {
	if s.SigningSecret != "" {
		in := s.interactivity(m.Logger)
		r.With(m.Count(thread.PlatformSlack), m.Buffer).Method(http.MethodPost, "/webhooks/slack", handleSlackEvents(m.Logger, s))
		r.With(m.Count(thread.PlatformSlack), m.Buffer).Method(http.MethodPost, "/webhooks/slack/commands", handleCommand(m.Logger, in, s.SigningSecret))
		r.With(m.Count(thread.PlatformSlack), m.Buffer).Method(http.MethodPost, "/webhooks/slack/interactions", handleInteraction(m.Logger, in, s.SigningSecret))
	} else {
		m.Logger.Debug("slack events off: no signing secret or bot token")
	}
	if o := s.OAuth; o != nil {
		f := slackFlow(m.Logger, o)
		r.Method(http.MethodGet, f.Path()+"/install", f.Install())
		r.Method(http.MethodGet, f.Path()+"/callback", f.Callback())
	}
}

// EventHandler records one verified Events API body and returns a
// url_verification's challenge. A body it cannot read wraps
// slackapi.ErrMalformed; any other failure means nothing was recorded.
type EventHandler interface {
	Handle(ctx context.Context, body []byte) (challenge string, err error)
}

// Command is one slash command invocation, as Slack posts it.
type Command struct {
	TeamID, ChannelID, UserID, UserName string
	Command                             string // "/weft"
	Text                                string // after the subcommand's name
	ResponseURL                         string
	TriggerID                           string
}

// CommandHandler runs a subcommand and returns the ephemeral reply.
// Slack shows an error unless the answer comes within 3 s: longer work
// answers through ResponseURL.
type CommandHandler func(ctx context.Context, c Command) (reply string, err error)

// handleSlackEvents answers the Events API. Every rejection happens before
// anything is written: 413 for an oversized body, 401 for a missing or bad
// signature or a timestamp outside five minutes, 400 for a body that is
// not an event envelope. A url_verification gets its challenge; every
// other validly signed body, unknown event types included, is recorded
// (once per event id: a retry writes nothing new) and acknowledged at
// once, the answer being left to a turn. A retry is handled like a first
// delivery, since it is the only one weft sees of an event sent while it
// was down. A failed write is a 500, which Slack retries.
func handleSlackEvents(logger *slog.Logger, s *Doors) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reject := webhook.Rejecter(ctx, w, logger, "slack event rejected")
		body, ok := webhook.ReadVerified(w, r, reject, "invalid signature", func(body []byte) error {
			return slackapi.Verify(r.Header, body, s.SigningSecret)
		})
		if !ok {
			return
		}
		challenge, err := s.Events.Handle(ctx, body)
		switch {
		case errors.Is(err, slackapi.ErrMalformed):
			reject(http.StatusBadRequest, "malformed event", err)
			return
		case err != nil:
			logger.ErrorContext(ctx, "slack event not recorded", slog.String("retry_num", r.Header.Get("X-Slack-Retry-Num")), slog.Any("error", err))
			http.Error(w, "event not recorded", http.StatusInternalServerError)
			return
		case challenge != "":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": challenge})
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// slackUsage is the reply to /weft without a known subcommand.
const slackUsage = "Usage: `/weft continue <conversation>` continues a conversation from elsewhere here; `/weft stop <link>` stops my work in a thread."

// slackCommandFailed is the reply to a subcommand that failed: the error
// is for the log, not the chat.
const slackCommandFailed = "Sorry, that did not work: something went wrong on weft's side. Please try again in a moment; if it keeps failing, tell whoever runs weft."

// interactivity is the commands and actions the doors run.
func (s *Doors) interactivity(logger *slog.Logger) *Interactivity {
	return &Interactivity{Commands: s.Commands, Actions: s.Actions, AllowedTeam: s.AllowedTeam, Logger: logger}
}

// handleCommand answers the /weft slash command: verified like an
// event (401), a form with its team, channel and user (else 400), routed
// by its first word to a subcommand, whose reply is shown to the caller
// alone. Slack's ssl_check pings get a 200. A workspace SLACK_ALLOWED_TEAMS
// leaves out is refused with a 200, so that Slack shows the refusal.
func handleCommand(logger *slog.Logger, in *Interactivity, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reject := webhook.Rejecter(ctx, w, logger, "slack command rejected")
		body, ok := webhook.ReadVerified(w, r, reject, "invalid signature", func(body []byte) error {
			return slackapi.Verify(r.Header, body, secret)
		})
		if !ok {
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			reject(http.StatusBadRequest, "malformed form", err)
			return
		}
		if form.Get("ssl_check") == "1" {
			w.WriteHeader(http.StatusOK)
			return
		}
		c := Command{TeamID: form.Get("team_id"), ChannelID: form.Get("channel_id"), UserID: form.Get("user_id"),
			UserName: form.Get("user_name"), Command: form.Get("command"), ResponseURL: form.Get("response_url"), TriggerID: form.Get("trigger_id")}
		if !c.complete() {
			reject(http.StatusBadRequest, "incomplete command", nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ephemeral(in.command(ctx, c, form.Get("text"))))
	})
}
