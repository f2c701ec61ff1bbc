package installation_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/installation"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

const slackRedirectURI = "https://weft.example/oauth/slack/callback"

type slackBundle struct {
	fake   *slacktest.OAuth
	oauth  *slack.OAuth
	store  *db.Store
	tokens *surfaceslack.Installations
}

func setupSlack(t *testing.T, rotate bool) *slackBundle {
	t.Helper()
	fake := slacktest.NewOAuth(t, rotate)
	store := dbtest.NewStore(t)
	cipher, err := secret.NewCipher(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	o := &slack.OAuth{ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, RedirectURI: slackRedirectURI, APIURL: fake.APIURL()}
	return &slackBundle{fake: fake, oauth: o, store: store, tokens: surfaceslack.NewInstallations(store, cipher, o, dbtest.Logger(t))}
}

func (b *slackBundle) install(t *testing.T) *slack.Install {
	t.Helper()
	b.fake.AddCode("code-1", slackRedirectURI)
	in, err := b.oauth.Exchange(t.Context(), "code-1")
	require.NoError(t, err)
	require.NoError(t, b.tokens.Save(t.Context(), in))
	return in
}

func TestTokens(t *testing.T) {
	t.Parallel()
	t.Run("StaticTokenSealed", func(t *testing.T) {
		t.Parallel()
		b := setupSlack(t, false)
		in := b.install(t)
		require.Equal(t, slacktest.TeamID, in.TeamID)
		require.True(t, in.ExpiresAt.IsZero())
		row, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.False(t, bytes.Contains(row.BotTokenEnc, []byte(in.BotToken)), "the token is stored sealed")
		require.Equal(t, "U0ADMIN", row.InstalledBy)
		tok, err := b.tokens.Token(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.Equal(t, in.BotToken, tok)
		require.Zero(t, b.fake.Refreshes())

		_, err = b.tokens.Token(t.Context(), "T0OTHER")
		require.ErrorIs(t, err, installation.ErrNotInstalled)
		require.NoError(t, b.tokens.Revoke(t.Context(), slacktest.TeamID))
		_, err = b.tokens.Token(t.Context(), slacktest.TeamID)
		require.ErrorIs(t, err, installation.ErrRevoked)
		b.fake.AddCode("code-1", slackRedirectURI)
		b.install(t) // a re-install reactivates
		_, err = b.tokens.Token(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
	})

	t.Run("RotatedOnceUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		b := setupSlack(t, true)
		in := b.install(t)
		require.WithinDuration(t, time.Now().Add(12*time.Hour), in.ExpiresAt, time.Minute)
		tok, err := b.tokens.Token(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.Equal(t, in.BotToken, tok, "a fresh token is not refreshed")

		row, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.NoError(t, b.store.UpdateSlackTokens(t.Context(), slacktest.TeamID, row.BotTokenEnc, row.RefreshTokenEnc, time.Now().Add(time.Minute)))
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Go(func() {
				tok, err := b.tokens.Token(context.Background(), slacktest.TeamID)
				require.NoError(t, err)
				got[i] = tok
			})
		}
		wg.Wait()
		require.Equal(t, 1, b.fake.Refreshes(), "a single-use refresh token is used once across callers")
		for _, g := range got {
			require.Equal(t, got[0], g)
			require.NotEqual(t, in.BotToken, g)
		}
		row, err = b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.True(t, row.ExpiresAt.After(time.Now().Add(11*time.Hour)))
	})

	t.Run("FailedRefreshKeepsLiveToken", func(t *testing.T) {
		t.Parallel()
		b := setupSlack(t, true)
		in := b.install(t)
		row, err := b.store.SlackInstallation(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		// A refresh token Slack no longer honours.
		_, err = b.oauth.Refresh(t.Context(), in.RefreshToken)
		require.NoError(t, err)
		require.NoError(t, b.store.UpdateSlackTokens(t.Context(), slacktest.TeamID, row.BotTokenEnc, row.RefreshTokenEnc, time.Now().Add(time.Minute)))
		tok, err := b.tokens.Token(t.Context(), slacktest.TeamID)
		require.NoError(t, err)
		require.Equal(t, in.BotToken, tok)
		require.NoError(t, b.store.UpdateSlackTokens(t.Context(), slacktest.TeamID, row.BotTokenEnc, row.RefreshTokenEnc, time.Now().Add(-time.Minute)))
		_, err = b.tokens.Token(t.Context(), slacktest.TeamID)
		require.Error(t, err, "an expired token is not handed out")
	})
}

func TestExchangeRefusals(t *testing.T) {
	t.Parallel()
	b := setupSlack(t, false)
	b.fake.AddCode("code-1", "https://elsewhere.example/cb")
	for _, code := range []string{"code-1", "never-issued"} {
		_, err := b.oauth.Exchange(t.Context(), code)
		require.Error(t, err)
		require.True(t, surface.IsKind(err, surface.KindInvalid), "%v", err)
	}
}
