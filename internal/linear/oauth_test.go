package linear_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface"
)

const redirectURI = "https://weft.example/oauth/linear/callback"

func TestAuthorizeURL(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(linear.AuthorizeURL("cid", redirectURI, "st", nil))
	require.NoError(t, err)
	require.Equal(t, "linear.app", u.Host)
	require.Equal(t, "/oauth/authorize", u.Path)
	require.Equal(t, url.Values{
		"client_id": {"cid"}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {"read,write,app:assignable,app:mentionable"}, "state": {"st"}, "actor": {"app"},
	}, u.Query())

	u, err = url.Parse(linear.AuthorizeURL("cid", redirectURI, "st", []string{"read"}))
	require.NoError(t, err)
	require.Equal(t, "read", u.Query().Get("scope"))
}

func TestOAuthExchangeAndRefresh(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.AddAuthCode("code-1", redirectURI)
	oc := linear.NewOAuthClient(lineartest.ClientID, lineartest.ClientSecret, redirectURI, srv.TokenURL(), nil)
	before := time.Now()

	tok, err := oc.ExchangeCode(t.Context(), "code-1")
	require.NoError(t, err)
	require.NotEmpty(t, tok.AccessToken)
	require.NotEmpty(t, tok.RefreshToken)
	require.Equal(t, []string{"read", "write", "app:assignable", "app:mentionable"}, tok.Scopes)
	require.True(t, tok.ExpiresAt.After(before.Add(23*time.Hour)), "expires at %v", tok.ExpiresAt)

	// The new token works against the API.
	client := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: linear.StaticToken(tok.AccessToken)})
	v, err := client.Viewer(t.Context())
	require.NoError(t, err)
	require.Equal(t, lineartest.OrganizationID, v.OrganizationID)

	// A code is good once.
	_, err = oc.ExchangeCode(t.Context(), "code-1")
	requireKind(t, err, surface.KindAuth)

	// Refresh rotates the refresh token; the old one is spent.
	next, err := oc.Refresh(t.Context(), tok.RefreshToken)
	require.NoError(t, err)
	require.NotEqual(t, tok.AccessToken, next.AccessToken)
	require.NotEqual(t, tok.RefreshToken, next.RefreshToken)
	_, err = oc.Refresh(t.Context(), tok.RefreshToken)
	e := requireKind(t, err, surface.KindAuth)
	require.Equal(t, "refresh token", e.Op)
	_, err = oc.Refresh(t.Context(), next.RefreshToken)
	require.NoError(t, err)
}

func TestOAuthErrors(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.AddAuthCode("code-1", redirectURI)

	wrongSecret := linear.NewOAuthClient(lineartest.ClientID, "nope", redirectURI, srv.TokenURL(), nil)
	_, err := wrongSecret.ExchangeCode(t.Context(), "code-1")
	requireKind(t, err, surface.KindAuth)

	wrongRedirect := linear.NewOAuthClient(lineartest.ClientID, lineartest.ClientSecret, "https://evil.example/cb", srv.TokenURL(), nil)
	_, err = wrongRedirect.ExchangeCode(t.Context(), "code-1")
	requireKind(t, err, surface.KindAuth)

	srv.Close()
	_, err = wrongSecret.Refresh(t.Context(), "r")
	requireKind(t, err, surface.KindServer)
}
