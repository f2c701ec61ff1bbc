package linear_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface/oauth"
)

// install starts the flow and returns the state Linear would send back and
// the cookie the browser would.
func (b *bundle) install(t *testing.T) (string, *http.Cookie) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/linear/install", nil))
	require.Equal(t, http.StatusFound, rec.Code)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	cookies := rec.Result().Cookies()
	require.Len(t, cookies, 1)
	return loc.Query().Get("state"), cookies[0]
}

func (b *bundle) callback(query url.Values, cookie *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/oauth/linear/callback?"+query.Encode(), nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	rec := httptest.NewRecorder()
	b.server.ServeHTTP(rec, req)
	return rec
}

func TestLinearInstallRedirect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := httptest.NewRecorder()
	b.server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/linear/install", nil))
	require.Equal(t, http.StatusFound, rec.Code)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "https://linear.app/oauth/authorize", loc.Scheme+"://"+loc.Host+loc.Path)
	q := loc.Query()
	require.Equal(t, lineartest.ClientID, q.Get("client_id"))
	require.Equal(t, redirectURI, q.Get("redirect_uri"))
	require.Equal(t, "code", q.Get("response_type"))
	require.Equal(t, "read,write,app:assignable,app:mentionable", q.Get("scope"))
	require.Equal(t, "app", q.Get("actor"))
	require.NoError(t, oauth.VerifyState(stateSecret, "linear", q.Get("state"), time.Now()))

	c := rec.Result().Cookies()
	require.Len(t, c, 1)
	require.Equal(t, q.Get("state"), c[0].Value)
	require.True(t, c[0].HttpOnly)
	require.True(t, c[0].Secure, "the callback is https")
}

func TestLinearInstallCallback(t *testing.T) {
	t.Parallel()

	t.Run("StoresEncryptedTokens", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		state, cookie := b.install(t)
		b.linear.AddAuthCode("code-1", redirectURI)
		rec := b.callback(url.Values{"code": {"code-1"}, "state": {state}}, cookie)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

		row, err := b.store.LinearInstallation(t.Context(), lineartest.OrganizationID)
		require.NoError(t, err)
		require.True(t, row.Active)
		require.Equal(t, lineartest.AppUserID, row.AppUserID)
		require.NotEmpty(t, row.RefreshTokenEnc)
		require.WithinDuration(t, time.Now().Add(24*time.Hour), row.ExpiresAt, time.Minute)
		require.False(t, bytes.Contains(row.AccessTokenEnc, []byte("lin_oauth_")), "tokens are stored encrypted")
		require.False(t, bytes.Contains(row.RefreshTokenEnc, []byte("lin_refresh_")), "tokens are stored encrypted")

		// The stored token is the one Linear issued: it works.
		v, err := linear.NewClient(linear.ClientDeps{Endpoint: b.linear.URL(), Tokens: b.tokens}).Viewer(linear.WithOrganization(t.Context(), lineartest.OrganizationID))
		require.NoError(t, err)
		require.Equal(t, lineartest.AppUserID, v.ID)
	})

	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		state, cookie := b.install(t)
		otherState, otherCookie := b.install(t)
		forged, err := oauth.SignState([]byte("not our secret"), "linear", time.Now().Add(time.Hour))
		require.NoError(t, err)
		expired, err := oauth.SignState(stateSecret, "linear", time.Now().Add(-time.Minute))
		require.NoError(t, err)
		b.linear.AddAuthCode("code-1", redirectURI)
		tests := []struct {
			name   string
			query  url.Values
			cookie *http.Cookie
			status int
		}{
			{"Denied", url.Values{"error": {"access_denied"}, "state": {state}}, cookie, http.StatusBadRequest},
			{"NoCookie", url.Values{"code": {"code-1"}, "state": {state}}, nil, http.StatusBadRequest},
			{"OtherBrowsersState", url.Values{"code": {"code-1"}, "state": {otherState}}, cookie, http.StatusBadRequest},
			{"ForgedState", url.Values{"code": {"code-1"}, "state": {forged}}, &http.Cookie{Name: cookie.Name, Value: forged}, http.StatusBadRequest},
			{"ExpiredState", url.Values{"code": {"code-1"}, "state": {expired}}, &http.Cookie{Name: cookie.Name, Value: expired}, http.StatusBadRequest},
			{"NoCode", url.Values{"state": {otherState}}, otherCookie, http.StatusBadRequest},
			{"UnknownCode", url.Values{"code": {"nope"}, "state": {state}}, cookie, http.StatusBadRequest},
		}
		for _, tt := range tests {
			rec := b.callback(tt.query, tt.cookie)
			require.Equal(t, tt.status, rec.Code, tt.name)
		}
		require.Zero(t, b.count(t, `SELECT count(*) FROM linear_installations`))
	})
}
