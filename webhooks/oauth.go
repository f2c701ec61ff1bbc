package webhooks

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/surface"
)

// stateCookie holds the OAuth state between the install redirect and the
// callback, binding the flow to the browser that started it: a callback
// URL carrying someone else's state is refused.
const stateCookie = "weft_linear_oauth_state"

// stateTTL is how long an admin has to approve the app on Linear's page.
const stateTTL = 15 * time.Minute

// handleLinearInstall sends a workspace admin to Linear to install the
// app as an agent (actor=app, AgentScopes), with a signed state.
func handleLinearInstall(logger *slog.Logger, o *LinearOAuth) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state, err := linear.SignState(o.StateSecret, time.Now().Add(stateTTL))
		if err != nil {
			logger.ErrorContext(r.Context(), "sign oauth state", slog.Any("error", err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: stateCookie, Value: state, Path: "/oauth/linear", MaxAge: int(stateTTL.Seconds()),
			HttpOnly: true, Secure: strings.HasPrefix(o.RedirectURI, "https://"),
			// Lax: the callback is a top-level navigation from linear.app.
			SameSite: http.SameSiteLaxMode,
		})
		http.Redirect(w, r, linear.AuthorizeURL(o.ClientID, o.RedirectURI, state, nil), http.StatusFound)
	})
}

// handleLinearCallback completes an install: it checks the state, trades
// the code for tokens, asks Linear which app user and workspace the token
// belongs to, and stores the installation with its tokens encrypted.
func handleLinearCallback(logger *slog.Logger, o *LinearOAuth) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			http.Error(w, "Linear did not authorize the app: "+e, http.StatusBadRequest)
			return
		}
		state := q.Get("state")
		c, err := r.Cookie(stateCookie)
		if linear.VerifyState(o.StateSecret, state, time.Now()) != nil || err != nil ||
			subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
			http.Error(w, "invalid or expired install state; start again from /oauth/linear/install", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: stateCookie, Path: "/oauth/linear", MaxAge: -1})
		code := q.Get("code")
		if code == "" {
			http.Error(w, "missing code", http.StatusBadRequest)
			return
		}
		tok, err := o.Codes.ExchangeCode(ctx, code)
		if err != nil {
			var le *surface.Error
			if errors.As(err, &le) && !le.Retryable() {
				http.Error(w, "Linear refused the authorization code; start again from /oauth/linear/install", http.StatusBadRequest)
				return
			}
			logger.ErrorContext(ctx, "exchange oauth code", slog.Any("error", err))
			http.Error(w, "could not reach Linear; try again", http.StatusBadGateway)
			return
		}
		v, err := linear.NewClient(o.Endpoint, o.HTTPClient, linear.StaticToken(tok.AccessToken)).Viewer(ctx)
		if err != nil {
			logger.ErrorContext(ctx, "identify new installation", slog.Any("error", err))
			http.Error(w, "could not reach Linear; try again", http.StatusBadGateway)
			return
		}
		if err := o.Installations.Save(ctx, tok, v); err != nil {
			logger.ErrorContext(ctx, "save installation", slog.String("organization_id", v.OrganizationID), slog.Any("error", err))
			http.Error(w, "could not save the installation; try again", http.StatusServiceUnavailable)
			return
		}
		logger.InfoContext(ctx, "linear app installed", slog.String("organization_id", v.OrganizationID), slog.String("app_user_id", v.ID))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte("weft is installed in " + v.OrganizationName + ". You can close this page.\n"))
	})
}
