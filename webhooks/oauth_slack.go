package webhooks

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
)

// slackStateCookie binds a Slack install flow to the browser that started
// it, as stateCookie does for Linear's.
const slackStateCookie = "weft_slack_oauth_state"

// SlackOAuth is the Slack app's OAuth v2 install flow.
type SlackOAuth struct {
	ClientID string
	// RedirectURI is this server's /oauth/slack/callback as the app's
	// settings list it (HTTPS); Codes must use the same.
	RedirectURI string
	// StateSecret signs the state parameter (the client secret).
	StateSecret []byte
	// Codes exchanges the callback's code; *slack.OAuth.
	Codes interface {
		Exchange(ctx context.Context, code string) (*slack.Install, error)
	}
	// Installations stores the result; *slackinstall.Tokens.
	Installations interface {
		Save(ctx context.Context, in *slack.Install) error
	}
	// Allowed says whether a workspace may install (SLACK_ALLOWED_TEAMS);
	// nil allows any.
	Allowed func(teamID string) bool
}

// handleSlackInstall sends a workspace admin to Slack's consent page with
// the manifest's bot scopes and a signed state.
func handleSlackInstall(logger *slog.Logger, o *SlackOAuth) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state, err := slack.SignState(o.StateSecret, time.Now().Add(stateTTL))
		if err != nil {
			logger.ErrorContext(r.Context(), "sign slack oauth state", slog.Any("error", err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: slackStateCookie, Value: state, Path: "/oauth/slack", MaxAge: int(stateTTL.Seconds()),
			HttpOnly: true, Secure: strings.HasPrefix(o.RedirectURI, "https://"), SameSite: http.SameSiteLaxMode,
		})
		http.Redirect(w, r, slack.AuthorizeURL(o.ClientID, o.RedirectURI, state), http.StatusFound)
	})
}

// handleSlackCallback completes an install: state, code exchange, and the
// workspace's bot token stored sealed.
func handleSlackCallback(logger *slog.Logger, o *SlackOAuth) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			http.Error(w, "Slack did not authorize the app: "+e, http.StatusBadRequest)
			return
		}
		state := q.Get("state")
		c, err := r.Cookie(slackStateCookie)
		if err != nil || slack.VerifyState(o.StateSecret, state, time.Now()) != nil ||
			subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
			http.Error(w, "invalid or expired install state; start again from /oauth/slack/install", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: slackStateCookie, Path: "/oauth/slack", MaxAge: -1})
		code := q.Get("code")
		if code == "" {
			http.Error(w, "missing code", http.StatusBadRequest)
			return
		}
		in, err := o.Codes.Exchange(ctx, code)
		if err != nil {
			var se *surface.Error
			if errors.As(err, &se) && se.Kind != surface.KindServer && se.Kind != surface.KindRateLimited {
				http.Error(w, "Slack refused the authorization code; start again from /oauth/slack/install", http.StatusBadRequest)
				return
			}
			logger.ErrorContext(ctx, "exchange slack oauth code", slog.Any("error", err))
			http.Error(w, "could not reach Slack; try again", http.StatusBadGateway)
			return
		}
		if o.Allowed != nil && !o.Allowed(in.TeamID) {
			logger.WarnContext(ctx, "slack install refused: team not in SLACK_ALLOWED_TEAMS", slog.String("team_id", in.TeamID))
			http.Error(w, "this Slack workspace may not install weft", http.StatusForbidden)
			return
		}
		if err := o.Installations.Save(ctx, in); err != nil {
			logger.ErrorContext(ctx, "save slack installation", slog.String("team_id", in.TeamID), slog.Any("error", err))
			http.Error(w, "could not save the installation; try again", http.StatusServiceUnavailable)
			return
		}
		logger.InfoContext(ctx, "slack app installed", slog.String("team_id", in.TeamID), slog.Bool("rotating", in.RefreshToken != ""))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte("weft is installed in " + in.TeamName + ". You can close this page.\n"))
	})
}
