package installation

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/secret"
)

// LinearRefreshMargin is how long before expiry a Linear access token is
// refreshed.
const LinearRefreshMargin = 5 * time.Minute

// Linear is the linear.TokenSource of an OAuth app installed in many
// workspaces (organizations).
type Linear struct {
	*Tokens
}

var _ linear.TokenSource = (*Linear)(nil)

// NewLinear returns the token source over the Linear installations in
// store; *linear.OAuthClient refreshes.
func NewLinear(store *db.Store, cipher *secret.Cipher, oauth Refresher[*linear.Token], logger *slog.Logger) *Linear {
	return &Linear{newTokens(Platform{
		Name: "linear", WorkspaceKey: "organization_id", Margin: LinearRefreshMargin,
		Table: tableOf("linear_installations", "access", (*db.Queries).LinearInstallation, (*db.Queries).LockLinearInstallation,
			(*db.Queries).UpdateLinearTokens, func(in *db.LinearInstallation) Sealed {
				return Sealed{Token: in.AccessTokenEnc, Refresh: in.RefreshTokenEnc, ExpiresAt: in.ExpiresAt, Active: in.Active}
			}),
		Refresh: refresher(oauth.Refresh, func(tok *linear.Token) Pair {
			return Pair{Token: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}
		}),
	}, store, cipher, logger)}
}

// Save stores the installation an OAuth callback produced: the token pair,
// and the app user and workspace the viewer query named. A re-install
// replaces the tokens and reactivates a revoked installation.
func (l *Linear) Save(ctx context.Context, tok *linear.Token, v *linear.Viewer) error {
	org := v.OrganizationID
	access, refresh, err := l.seal(org, Pair{Token: tok.AccessToken, Refresh: tok.RefreshToken})
	if err != nil {
		return err
	}
	err = l.store.SaveLinearInstallation(ctx, db.LinearInstallation{
		OrganizationID: org, AppUserID: v.ID, AccessTokenEnc: access, RefreshTokenEnc: refresh,
		ExpiresAt: tok.ExpiresAt, Scopes: tok.Scopes,
	})
	if err != nil {
		return fmt.Errorf("installation: save linear: %w", err)
	}
	return nil
}
