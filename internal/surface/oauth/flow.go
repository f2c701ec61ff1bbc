package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/surface"
)

// StateTTL is how long an admin has to approve the app on the platform's
// consent page.
const StateTTL = 15 * time.Minute

// Flow is one platform's install: GET Path()+"/install" and
// Path()+"/callback". T is what the platform's code exchange returns.
type Flow[T any] struct {
	// Name is the platform's name in paths, cookies and logs, lower case;
	// Title is how an admin reads it, capitalised.
	Name, Title string
	// RedirectURI is this server's callback as the platform knows it; an
	// https one makes the state cookie Secure.
	RedirectURI string
	// StateSecret signs the state parameter.
	StateSecret []byte
	// AuthorizeURL is the platform's consent page for state.
	AuthorizeURL func(state string) string
	// Exchange trades the callback's code. A *surface.Error that is not
	// retryable means the platform refused the code.
	Exchange func(ctx context.Context, code string) (T, error)
	// Save stores what Exchange returned and says what was installed. An
	// *Answer is shown as it is; any other error is a failed save.
	Save   func(ctx context.Context, got T) (Installed, error)
	Logger *slog.Logger
}

// Installed is what Save stored: the workspace's name for the admin's page
// and the attributes to log it with.
type Installed struct {
	Workspace string
	Log       []any
}

// Answer is a failure of Save that the callback shows the admin with its
// status, logging Err.
type Answer struct {
	Status  int
	Message string
	Err     error
}

func (a *Answer) Error() string {
	if a.Err == nil {
		return a.Message
	}
	return a.Message + ": " + a.Err.Error()
}

func (a *Answer) Unwrap() error { return a.Err }

// Path is where the flow's handlers live, "/oauth/<name>".
func (f *Flow[T]) Path() string { return "/oauth/" + f.Name }

// cookie holds the state between the install redirect and the callback,
// binding the flow to the browser that started it: a callback URL
// carrying someone else's state is refused.
func (f *Flow[T]) cookie() string { return "weft_" + f.Name + "_oauth_state" }

// Install sends an admin to the platform's consent page with a signed
// state, set also in a cookie.
func (f *Flow[T]) Install() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state, err := SignState(f.StateSecret, f.Name, time.Now().Add(StateTTL))
		if err != nil {
			f.Logger.ErrorContext(r.Context(), "sign oauth state", slog.String("platform", f.Name), slog.Any("error", err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: f.cookie(), Value: state, Path: f.Path(), MaxAge: int(StateTTL.Seconds()),
			HttpOnly: true, Secure: strings.HasPrefix(f.RedirectURI, "https://"),
			// Lax: the callback is a top-level navigation from the platform.
			SameSite: http.SameSiteLaxMode,
		})
		http.Redirect(w, r, f.AuthorizeURL(state), http.StatusFound)
	})
}

// Callback completes an install: it checks the state against the cookie,
// trades the code and saves the result.
func (f *Flow[T]) Callback() http.Handler {
	again := "; start again from " + f.Path() + "/install"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			http.Error(w, f.Title+" did not authorize the app: "+e, http.StatusBadRequest)
			return
		}
		state := q.Get("state")
		c, err := r.Cookie(f.cookie())
		if err != nil || VerifyState(f.StateSecret, f.Name, state, time.Now()) != nil ||
			subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
			http.Error(w, "invalid or expired install state"+again, http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: f.cookie(), Path: f.Path(), MaxAge: -1})
		code := q.Get("code")
		if code == "" {
			http.Error(w, "missing code", http.StatusBadRequest)
			return
		}
		got, err := f.Exchange(ctx, code)
		if err != nil {
			var pe *surface.Error
			if errors.As(err, &pe) && !pe.Retryable() {
				http.Error(w, f.Title+" refused the authorization code"+again, http.StatusBadRequest)
				return
			}
			f.Logger.ErrorContext(ctx, "exchange oauth code", slog.String("platform", f.Name), slog.Any("error", err))
			http.Error(w, "could not reach "+f.Title+"; try again", http.StatusBadGateway)
			return
		}
		in, err := f.Save(ctx, got)
		if err != nil {
			a := &Answer{Status: http.StatusServiceUnavailable, Message: "could not save the installation; try again", Err: err}
			errors.As(err, &a)
			level := slog.LevelError
			if a.Status < http.StatusInternalServerError {
				level = slog.LevelWarn
			}
			f.Logger.Log(ctx, level, "oauth install failed", slog.String("platform", f.Name), slog.Int("status", a.Status), slog.Any("error", err))
			http.Error(w, a.Message, a.Status)
			return
		}
		f.Logger.InfoContext(ctx, f.Name+" app installed", in.Log...)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte("weft is installed in " + in.Workspace + ". You can close this page.\n"))
	})
}
