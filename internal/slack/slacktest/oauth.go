package slacktest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// OAuth client credentials the OAuth fake accepts.
const (
	ClientID     = "1111.2222"
	ClientSecret = "slacktest-client-secret"
)

// OAuth is a fake of Slack's oauth.v2.access: codes are single-use and
// bound to their redirect URI and workspace; with rotation on, bot tokens
// expire after 12 hours and each refresh token works once, as Slack's do.
// Attached to a Server, the bot tokens it issues work there, each in its
// own workspace.
type OAuth struct {
	http   *httptest.Server
	rotate bool

	mu        sync.Mutex
	srv       *Server
	expiresIn int // seconds a rotating bot token lives
	codes     map[string]grant
	refresh   map[string]string // refresh token → its team, while still good
	n         int
	refreshes int
}

// grant is an authorization code's redirect URI and workspace.
type grant struct{ redirectURI, team string }

// NewOAuth starts the fake; rotate turns token rotation on. With a non-nil
// t it is closed in t.Cleanup.
func NewOAuth(t fakekit.TB, rotate bool) *OAuth {
	o := &OAuth{rotate: rotate, expiresIn: 43200, codes: map[string]grant{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/oauth.v2.access", o.access)
	o.http = httptest.NewServer(mux)
	fakekit.CloseAtEnd(t, o.http.Close)
	return o
}

// APIURL is the base URL for slack.OAuth's APIURL.
func (o *OAuth) APIURL() string { return o.http.URL + "/api/" }

// Attach makes the bot tokens issued from now on work at s, in the
// workspace each was issued for, and s answer oauth.v2.access too, as
// Slack's one Web API does.
func (o *OAuth) Attach(s *Server) {
	o.mu.Lock()
	o.srv = s
	o.mu.Unlock()
	s.mu.Lock()
	s.oauth = o
	s.mu.Unlock()
}

// SetExpiresIn sets how long the rotating bot tokens issued from now on
// live (Slack's: 12 hours).
func (o *OAuth) SetExpiresIn(d time.Duration) {
	o.mu.Lock()
	o.expiresIn = int(d.Seconds())
	o.mu.Unlock()
}

// AddCode makes code good once, for redirectURI, installing in TeamID's
// workspace.
func (o *OAuth) AddCode(code, redirectURI string) { o.AddTeamCode(code, redirectURI, TeamID) }

// AddTeamCode makes code good once, for redirectURI, installing in the
// workspace teamID (its name and bot user those the attached Server knows).
func (o *OAuth) AddTeamCode(code, redirectURI, teamID string) {
	o.mu.Lock()
	o.codes[code] = grant{redirectURI: redirectURI, team: teamID}
	o.mu.Unlock()
}

// Refreshes counts the refresh grants that succeeded.
func (o *OAuth) Refreshes() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refreshes
}

func (o *OAuth) access(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil || r.PostForm.Get("client_id") != ClientID || r.PostForm.Get("client_secret") != ClientSecret {
		writeJSON(w, http.StatusOK, errBody("invalid_client_id"))
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "", "authorization_code":
		g, ok := o.codes[r.PostForm.Get("code")]
		switch {
		case !ok:
			writeJSON(w, http.StatusOK, errBody("invalid_code"))
			return
		case g.redirectURI != r.PostForm.Get("redirect_uri"):
			writeJSON(w, http.StatusOK, errBody("bad_redirect_uri"))
			return
		}
		delete(o.codes, r.PostForm.Get("code"))
		team := o.teamLocked(g.team)
		body := o.tokensLocked(team.ID)
		body["app_id"], body["bot_user_id"], body["scope"] = AppID, team.BotUserID, "app_mentions:read,chat:write"
		body["team"] = map[string]any{"id": team.ID, "name": team.Name}
		body["enterprise"] = nil
		body["authed_user"] = map[string]any{"id": "U0ADMIN"}
		writeJSON(w, http.StatusOK, body)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		team, ok := o.refresh[rt]
		if !ok {
			writeJSON(w, http.StatusOK, errBody("invalid_refresh_token"))
			return
		}
		delete(o.refresh, rt)
		o.refreshes++
		writeJSON(w, http.StatusOK, o.tokensLocked(team))
	default:
		writeJSON(w, http.StatusOK, errBody("invalid_grant_type"))
	}
}

// teamLocked is a workspace as the attached Server knows it.
func (o *OAuth) teamLocked(id string) Team {
	if o.srv != nil {
		if tm, ok := o.srv.TeamOf(id); ok {
			return tm
		}
	}
	if id == TeamID {
		return firstTeam
	}
	return plainTeam(id)
}

// tokensLocked issues a bot token of team (and, rotating, a refresh
// token), good at the attached Server. An earlier bot token stays good
// until it expires, as Slack's do.
func (o *OAuth) tokensLocked(team string) map[string]any {
	o.n++
	body := map[string]any{"ok": true, "token_type": "bot", "access_token": fmt.Sprintf("xoxb-slacktest-%d", o.n)}
	if o.rotate {
		rt := fmt.Sprintf("xoxe-1-slacktest-%d", o.n)
		o.refresh[rt] = team
		body["access_token"] = fmt.Sprintf("xoxe.xoxb-slacktest-%d", o.n)
		body["refresh_token"], body["expires_in"] = rt, o.expiresIn
	}
	if o.srv != nil {
		o.srv.AddToken(team, body["access_token"].(string))
	}
	return body
}
