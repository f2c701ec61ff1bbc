package slacktest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
)

// OAuth client credentials the OAuth fake accepts.
const (
	ClientID     = "1111.2222"
	ClientSecret = "slacktest-client-secret"
)

// OAuth is a fake of Slack's oauth.v2.access: codes are single-use and
// bound to their redirect URI; with rotation on, bot tokens expire after
// 12 hours and each refresh token works once, as Slack's do.
type OAuth struct {
	http   *httptest.Server
	rotate bool

	mu        sync.Mutex
	codes     map[string]string // code → redirect URI
	refresh   map[string]bool   // refresh token → still good
	n         int
	refreshes int
}

// NewOAuth starts the fake; rotate turns token rotation on. With a non-nil
// t it is closed in t.Cleanup.
func NewOAuth(t TB, rotate bool) *OAuth {
	o := &OAuth{rotate: rotate, codes: map[string]string{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/oauth.v2.access", o.access)
	o.http = httptest.NewServer(mux)
	if t != nil {
		t.Cleanup(o.http.Close)
	}
	return o
}

// APIURL is the base URL for slack.OAuth's APIURL.
func (o *OAuth) APIURL() string { return o.http.URL + "/api/" }

// AddCode makes code good once, for redirectURI.
func (o *OAuth) AddCode(code, redirectURI string) {
	o.mu.Lock()
	o.codes[code] = redirectURI
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
		uri, ok := o.codes[r.PostForm.Get("code")]
		switch {
		case !ok:
			writeJSON(w, http.StatusOK, errBody("invalid_code"))
			return
		case uri != r.PostForm.Get("redirect_uri"):
			writeJSON(w, http.StatusOK, errBody("bad_redirect_uri"))
			return
		}
		delete(o.codes, r.PostForm.Get("code"))
		body := o.tokensLocked()
		body["app_id"], body["bot_user_id"], body["scope"] = AppID, BotUserID, "app_mentions:read,chat:write"
		body["team"] = map[string]any{"id": TeamID, "name": TeamName}
		body["enterprise"] = nil
		body["authed_user"] = map[string]any{"id": "U0ADMIN"}
		writeJSON(w, http.StatusOK, body)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if !o.refresh[rt] {
			writeJSON(w, http.StatusOK, errBody("invalid_refresh_token"))
			return
		}
		o.refresh[rt] = false
		o.refreshes++
		writeJSON(w, http.StatusOK, o.tokensLocked())
	default:
		writeJSON(w, http.StatusOK, errBody("invalid_grant_type"))
	}
}

// tokensLocked issues a bot token (and, rotating, a refresh token).
func (o *OAuth) tokensLocked() map[string]any {
	o.n++
	body := map[string]any{"ok": true, "token_type": "bot", "access_token": fmt.Sprintf("xoxb-slacktest-%d", o.n)}
	if o.rotate {
		rt := fmt.Sprintf("xoxe-1-slacktest-%d", o.n)
		o.refresh[rt] = true
		body["access_token"] = fmt.Sprintf("xoxe.xoxb-slacktest-%d", o.n)
		body["refresh_token"], body["expires_in"] = rt, 43200
	}
	return body
}
