package linear

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/surface/installation"
)

// RefreshMargin is how long before expiry a Linear access token is
// refreshed.
const RefreshMargin = 5 * time.Minute

// Installations is the linearapi.TokenSource of an OAuth app installed in many
// workspaces (organizations).
type Installations struct {
	*installation.Tokens
	store *db.Store
}

var _ linearapi.TokenSource = (*Installations)(nil)

// NewInstallations returns the token source over the Linear installations in
// store; *linearapi.OAuthClient refreshes.
func NewInstallations(store *db.Store, cipher *secret.Cipher, oauth installation.Refresher[*linearapi.Token], logger *slog.Logger) *Installations {
	return &Installations{Tokens: installation.NewTokens(installation.Platform{
		Name: "linear", WorkspaceKey: "organization_id", Margin: RefreshMargin,
		Table: installation.TableOf("linear_installations", "access", (*db.Queries).LinearInstallation, (*db.Queries).LockLinearInstallation,
			(*db.Queries).UpdateLinearTokens, func(in *db.LinearInstallation) installation.Sealed {
				return installation.Sealed{Token: in.AccessTokenEnc, Refresh: in.RefreshTokenEnc, ExpiresAt: in.ExpiresAt, Active: in.Active}
			}),
		Refresh: installation.RefreshWith(oauth.Refresh, func(tok *linearapi.Token) installation.Pair {
			return installation.Pair{Token: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}
		}),
	}, store, cipher, logger), store: store}
}

// Save stores the installation an OAuth callback produced: the token pair,
// and the app user and workspace the viewer query named. A re-install
// replaces the tokens and reactivates a revoked installation.
func (l *Installations) Save(ctx context.Context, tok *linearapi.Token, v *linearapi.Viewer) error {
	org := v.OrganizationID
	access, refresh, err := l.Seal(org, installation.Pair{Token: tok.AccessToken, Refresh: tok.RefreshToken})
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
