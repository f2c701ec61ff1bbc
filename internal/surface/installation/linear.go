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

// LinearRefresher trades a refresh token for a new token pair;
// *linear.OAuthClient implements it.
type LinearRefresher interface {
	Refresh(ctx context.Context, refreshToken string) (*linear.Token, error)
}

// Linear is the linear.TokenSource of an OAuth app installed in many
// workspaces (organizations).
type Linear struct {
	*Tokens
}

var _ linear.TokenSource = (*Linear)(nil)

// NewLinear returns the token source over the Linear installations in store.
func NewLinear(store *db.Store, cipher *secret.Cipher, oauth LinearRefresher, logger *slog.Logger) *Linear {
	return &Linear{newTokens(Platform{
		Name: "linear", WorkspaceKey: "organization_id", Margin: LinearRefreshMargin,
		Table: Table{
			Name: "linear_installations", TokenColumn: "access",
			Get: func(ctx context.Context, q *db.Queries, org string) (Sealed, error) {
				return linearSealed(q.LinearInstallation(ctx, org))
			},
			Lock: func(ctx context.Context, tx *db.Tx, org string) (Sealed, error) {
				return linearSealed(tx.LockLinearInstallation(ctx, org))
			},
			Update: func(ctx context.Context, tx *db.Tx, org string, token, refresh []byte, expiresAt time.Time) error {
				return tx.UpdateLinearTokens(ctx, org, token, refresh, expiresAt)
			},
		},
		Refresh: func(ctx context.Context, rt string) (Pair, error) {
			tok, err := oauth.Refresh(ctx, rt)
			if err != nil {
				return Pair{}, err
			}
			return Pair{Token: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}, nil
		},
	}, store, cipher, logger)}
}

func linearSealed(in *db.LinearInstallation, err error) (Sealed, error) {
	if err != nil {
		return Sealed{}, err
	}
	return Sealed{Token: in.AccessTokenEnc, Refresh: in.RefreshTokenEnc, ExpiresAt: in.ExpiresAt, Active: in.Active}, nil
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
