package slack_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface/oauth"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
)

const slackRedirectURI = "https://weft.example/oauth/slack/callback"

type slackOAuthBundle struct {
	handler http.Handler
	fake    *slacktest.OAuth
	store   *db.Store
	tokens  *surfaceslack.Installations
}

func setupSlackOAuth(t *testing.T, allowed ...string) *slackOAuthBundle {
	t.Helper()
	store := dbtest.NewStore(t)
	fake := slacktest.NewOAuth(t, true)
	cipher, err := secret.NewCipher(bytes.Repeat([]byte{3}, secret.KeySize))
	require.NoError(t, err)
	o := &slack.OAuth{ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, RedirectURI: slackRedirectURI, APIURL: fake.APIURL()}
	tokens := surfaceslack.NewInstallations(store, cipher, o, logtest.New(t))
	so := &surfaceslack.OAuth{ClientID: slacktest.ClientID, RedirectURI: slackRedirectURI, StateSecret: []byte(slacktest.ClientSecret),
		Codes: o, Installations: tokens}
	if len(allowed) > 0 {
		so.Allowed = func(team string) bool { return team == allowed[0] }
	}
	h := mount(t, &surfaceslack.Doors{OAuth: so})
	return &slackOAuthBundle{handler: h, fake: fake, store: store, tokens: tokens}
}

func (b *slackOAuthBundle) get(path string, cookie *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	return rec
}

func (b *slackOAuthBundle) start(t *testing.T) (string, *http.Cookie) {
	t.Helper()
	rec := b.get("/oauth/slack/install", nil)
	require.Equal(t, http.StatusFound, rec.Code)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "https://slack.com/oauth/v2/authorize", loc.Scheme+"://"+loc.Host+loc.Path)
	q := loc.Query()
	require.Equal(t, slacktest.ClientID, q.Get("client_id"))
	require.Equal(t, slackRedirectURI, q.Get("redirect_uri"))
	require.Equal(t, strings.Join(slack.BotScopes, ","), q.Get("scope"))
	c := rec.Result().Cookies()
	require.Len(t, c, 1)
	require.True(t, c[0].HttpOnly)
	require.True(t, c[0].Secure)
	return q.Get("state"), c[0]
}

func TestSlackInstall(t *testing.T) {
	t.Parallel()

	t.Run("StoresSealedRotatingToken", func(t *testing.T) {
		t.Parallel()
		b := setupSlackOAuth(t)
		state, cookie := b.start(t)
		b.fake.AddCode("code-1", slackRedirectURI)
		rec := b.get("/oauth/slack/callback?"+url.Values{"code": {"code-1"}, "state": {state}}.Encode(), cookie)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		row, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.True(t, row.Active)
		require.Equal(t, slacktest.BotUserID, row.BotUserID)
		require.NotEmpty(t, row.RefreshTokenEnc)
		require.False(t, bytes.Contains(row.BotTokenEnc, []byte("xoxb")))
		require.WithinDuration(t, time.Now().Add(12*time.Hour), row.ExpiresAt, time.Minute)
		tok, err := b.tokens.Token(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(tok, "xoxe.xoxb-"))
	})

	t.Run("TeamNotAllowed", func(t *testing.T) {
		t.Parallel()
		b := setupSlackOAuth(t, "T0OTHER")
		state, cookie := b.start(t)
		b.fake.AddCode("code-1", slackRedirectURI)
		rec := b.get("/oauth/slack/callback?"+url.Values{"code": {"code-1"}, "state": {state}}.Encode(), cookie)
		require.Equal(t, http.StatusForbidden, rec.Code)
		_, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	forged, err := oauth.SignState([]byte("another secret"), "slack", time.Now().Add(time.Minute))
	require.NoError(t, err)
	expired, err := oauth.SignState([]byte(slacktest.ClientSecret), "slack", time.Now().Add(-time.Minute))
	require.NoError(t, err)
	tests := []struct {
		name   string
		query  func(state string) url.Values
		cookie bool
		status int
	}{
		{"Denied", func(string) url.Values { return url.Values{"error": {"access_denied"}} }, true, http.StatusBadRequest},
		{"NoCookie", func(s string) url.Values { return url.Values{"code": {"code-1"}, "state": {s}} }, false, http.StatusBadRequest},
		{"ForgedState", func(string) url.Values { return url.Values{"code": {"code-1"}, "state": {forged}} }, true, http.StatusBadRequest},
		{"ExpiredState", func(string) url.Values { return url.Values{"code": {"code-1"}, "state": {expired}} }, true, http.StatusBadRequest},
		{"TruncatedState", func(s string) url.Values { return url.Values{"code": {"code-1"}, "state": {s[:len(s)-3]}} }, true, http.StatusBadRequest},
		{"NoCode", func(s string) url.Values { return url.Values{"state": {s}} }, true, http.StatusBadRequest},
		{"UnknownCode", func(s string) url.Values { return url.Values{"code": {"never"}, "state": {s}} }, true, http.StatusBadRequest},
		{"OversizedCode", func(s string) url.Values { return url.Values{"code": {strings.Repeat("x", 8000)}, "state": {s}} }, true, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupSlackOAuth(t)
			state, cookie := b.start(t)
			b.fake.AddCode("code-1", slackRedirectURI)
			if !tt.cookie {
				cookie = nil
			}
			rec := b.get("/oauth/slack/callback?"+tt.query(state).Encode(), cookie)
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			_, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
			require.ErrorIs(t, err, thread.ErrNotFound, "nothing written")
		})
	}

	t.Run("ReplayedCode", func(t *testing.T) {
		t.Parallel()
		b := setupSlackOAuth(t)
		state, cookie := b.start(t)
		b.fake.AddCode("code-1", slackRedirectURI)
		q := "/oauth/slack/callback?" + url.Values{"code": {"code-1"}, "state": {state}}.Encode()
		require.Equal(t, http.StatusOK, b.get(q, cookie).Code)
		require.Equal(t, http.StatusBadRequest, b.get(q, cookie).Code, "a code works once")
	})
}
