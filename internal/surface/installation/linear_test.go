package installation_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/installation"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const redirectURI = "https://weft.example/oauth/linear/callback"

// countingRefresher counts refreshes that reach Linear.
type countingRefresher struct {
	oauth *linear.OAuthClient
	n     atomic.Int32
}

func (c *countingRefresher) Refresh(ctx context.Context, rt string) (*linear.Token, error) {
	c.n.Add(1)
	return c.oauth.Refresh(ctx, rt)
}

type bundle struct {
	srv     *lineartest.Server
	store   *db.Store
	cipher  *secret.Cipher
	refresh *countingRefresher
	tokens  *surfacelinear.Installations
}

func setup(t *testing.T) *bundle {
	t.Helper()
	srv := lineartest.NewServer(t)
	store := dbtest.NewStore(t)
	cipher, err := secret.NewCipher(bytes.Repeat([]byte{9}, secret.KeySize))
	require.NoError(t, err)
	oauth := linear.NewOAuthClient(lineartest.ClientID, lineartest.ClientSecret, redirectURI, srv.TokenURL(), nil)
	r := &countingRefresher{oauth: oauth}
	return &bundle{srv: srv, store: store, cipher: cipher, refresh: r,
		tokens: surfacelinear.NewInstallations(store, cipher, r, dbtest.Logger(t))}
}

// install runs the OAuth code exchange against the fake and saves the
// result, as the callback does.
func (b *bundle) install(t *testing.T) *linear.Token {
	t.Helper()
	ctx := t.Context()
	b.srv.AddAuthCode("code-1", redirectURI)
	tok, err := b.refresh.oauth.ExchangeCode(ctx, "code-1")
	require.NoError(t, err)
	v, err := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: linear.StaticToken(tok.AccessToken)}).Viewer(ctx)
	require.NoError(t, err)
	require.NoError(t, b.tokens.Save(ctx, tok, v))
	return tok
}

// expireSoon moves the stored token's expiry inside the refresh margin.
func (b *bundle) expireSoon(t *testing.T, in time.Duration) {
	t.Helper()
	row, err := b.store.LinearInstallation(t.Context(), lineartest.OrganizationID)
	require.NoError(t, err)
	require.NoError(t, b.store.UpdateLinearTokens(t.Context(), row.OrganizationID, row.AccessTokenEnc, row.RefreshTokenEnc, time.Now().Add(in)))
}

func TestSaveSealsTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.install(t)
	row, err := b.store.LinearInstallation(t.Context(), lineartest.OrganizationID)
	require.NoError(t, err)
	require.Equal(t, lineartest.AppUserID, row.AppUserID)
	require.True(t, row.Active)
	require.Equal(t, []string{"read", "write", "app:assignable", "app:mentionable"}, row.Scopes)
	require.False(t, bytes.Contains(row.AccessTokenEnc, []byte(tok.AccessToken)), "stored in the clear")
	require.False(t, bytes.Contains(row.RefreshTokenEnc, []byte(tok.RefreshToken)), "stored in the clear")

	got, err := b.tokens.Token(t.Context(), lineartest.OrganizationID)
	require.NoError(t, err)
	require.Equal(t, tok.AccessToken, got)
	require.Zero(t, b.refresh.n.Load(), "a fresh token is not refreshed")

	// The Linear client authenticates with it.
	v, err := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: b.tokens}).Viewer(linear.WithOrganization(t.Context(), lineartest.OrganizationID))
	require.NoError(t, err)
	require.Equal(t, lineartest.OrganizationID, v.OrganizationID)
}

func TestRefresh(t *testing.T) {
	t.Parallel()

	t.Run("RotatesBeforeExpiry", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		old := b.install(t)
		b.expireSoon(t, time.Minute)
		got, err := b.tokens.Token(t.Context(), lineartest.OrganizationID)
		require.NoError(t, err)
		require.NotEqual(t, old.AccessToken, got)
		require.EqualValues(t, 1, b.refresh.n.Load())

		// The new refresh token was stored: the next refresh works, and
		// the old refresh token is dead.
		_, err = b.refresh.oauth.Refresh(t.Context(), old.RefreshToken)
		require.Error(t, err)
		b.expireSoon(t, time.Minute)
		again, err := b.tokens.Token(t.Context(), lineartest.OrganizationID)
		require.NoError(t, err)
		require.NotEqual(t, got, again)
		require.EqualValues(t, 2, b.refresh.n.Load())
		row, err := b.store.LinearInstallation(t.Context(), lineartest.OrganizationID)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(24*time.Hour), row.ExpiresAt, time.Hour)
	})

	t.Run("ConcurrentRefreshersRefreshOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.install(t)
		b.expireSoon(t, time.Minute)
		const n = 8
		got := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i], errs[i] = b.tokens.Token(t.Context(), lineartest.OrganizationID) })
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, got[0], got[i])
		}
		require.EqualValues(t, 1, b.refresh.n.Load())
	})

	t.Run("FailureFallsBackWhileValid", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		old := b.install(t)
		b.expireSoon(t, time.Minute)
		// The refresh token is consumed elsewhere: Linear refuses it.
		_, err := b.refresh.oauth.Refresh(t.Context(), old.RefreshToken)
		require.NoError(t, err)
		got, err := b.tokens.Token(t.Context(), lineartest.OrganizationID)
		require.NoError(t, err)
		require.Equal(t, old.AccessToken, got)

		b.expireSoon(t, -time.Minute)
		_, err = b.tokens.Token(t.Context(), lineartest.OrganizationID)
		var le *surface.Error
		require.ErrorAs(t, err, &le)
		require.Equal(t, surface.KindAuth, le.Kind)
	})
}

func TestTokenErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.tokens.Token(t.Context(), "unknown-org")
	require.ErrorIs(t, err, installation.ErrNotInstalled)

	b.install(t)
	_, err = b.store.DeactivateLinearInstallation(t.Context(), lineartest.OrganizationID)
	require.NoError(t, err)
	_, err = b.tokens.Token(t.Context(), lineartest.OrganizationID)
	require.ErrorIs(t, err, installation.ErrRevoked)

	// The client reports it as an auth failure, which the outbox gives up on.
	_, err = linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), HTTPClient: &http.Client{}, Tokens: b.tokens}).Viewer(linear.WithOrganization(t.Context(), lineartest.OrganizationID))
	var le *surface.Error
	require.True(t, errors.As(err, &le))
	require.Equal(t, surface.KindAuth, le.Kind)
}
