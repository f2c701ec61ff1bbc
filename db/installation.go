package db

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// LinearInstallation is the app's OAuth installation in one Linear
// workspace. The tokens are ciphertext: the caller seals them before they
// reach this package and opens them after, so no query ever sees a token.
type LinearInstallation struct {
	OrganizationID  string
	AppUserID       string
	AccessTokenEnc  []byte
	RefreshTokenEnc []byte    // nil when Linear gave no refresh token
	ExpiresAt       time.Time // zero when the access token does not expire
	Scopes          []string
	Active          bool
	InstalledAt     time.Time
	UpdatedAt       time.Time
	RevokedAt       time.Time // zero while active
}

func installationOf(r dbsqlc.LinearInstallation, err error) (*LinearInstallation, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &LinearInstallation{
		OrganizationID:  r.OrganizationID,
		AppUserID:       r.AppUserID,
		AccessTokenEnc:  r.AccessTokenEnc,
		RefreshTokenEnc: r.RefreshTokenEnc,
		ExpiresAt:       tm(r.ExpiresAt),
		Scopes:          r.Scopes,
		Active:          r.IsActive,
		InstalledAt:     r.InstalledAt,
		UpdatedAt:       r.UpdatedAt,
		RevokedAt:       tm(r.RevokedAt),
	}, nil
}

// SaveLinearInstallation stores a workspace's installation: a new one, or
// a re-install, which replaces the tokens and makes it active again.
func (q *Queries) SaveLinearInstallation(ctx context.Context, in LinearInstallation) error {
	if in.OrganizationID == "" || in.AppUserID == "" || len(in.AccessTokenEnc) == 0 {
		return fmt.Errorf("save linear installation: %w: organization, app user and access token are required", thread.ErrInvalid)
	}
	scopes := in.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	err := q.gen.SaveLinearInstallation(ctx, dbsqlc.SaveLinearInstallationParams{
		OrganizationID:  in.OrganizationID,
		AppUserID:       in.AppUserID,
		AccessTokenEnc:  in.AccessTokenEnc,
		RefreshTokenEnc: in.RefreshTokenEnc,
		ExpiresAt:       nullTime(in.ExpiresAt),
		Scopes:          scopes,
	})
	if err != nil {
		return fmt.Errorf("save linear installation: %w", translate(err))
	}
	return nil
}

// LinearInstallation returns a workspace's installation, active or not, or
// thread.ErrNotFound.
func (q *Queries) LinearInstallation(ctx context.Context, organizationID string) (*LinearInstallation, error) {
	in, err := installationOf(q.gen.LinearInstallation(ctx, organizationID))
	if err != nil {
		return nil, fmt.Errorf("linear installation: %w", err)
	}
	return in, nil
}

// LockLinearInstallation returns a workspace's installation locked until
// the transaction ends. A token refresh holds it: Linear rotates the
// refresh token on every use, so two replicas refreshing at once with the
// same one would leave one of them with a dead token. The second waits
// here, then reads the row the first committed and finds it fresh.
func (q *Queries) LockLinearInstallation(ctx context.Context, organizationID string) (*LinearInstallation, error) {
	in, err := installationOf(q.gen.LockLinearInstallation(ctx, organizationID))
	if err != nil {
		return nil, fmt.Errorf("lock linear installation: %w", err)
	}
	return in, nil
}

// UpdateLinearTokens stores the token pair a refresh returned.
func (q *Queries) UpdateLinearTokens(ctx context.Context, organizationID string, accessEnc, refreshEnc []byte, expiresAt time.Time) error {
	n, err := q.gen.UpdateLinearTokens(ctx, dbsqlc.UpdateLinearTokensParams{
		OrganizationID: organizationID, AccessTokenEnc: accessEnc, RefreshTokenEnc: refreshEnc, ExpiresAt: nullTime(expiresAt),
	})
	if err != nil {
		return fmt.Errorf("update linear tokens: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("update linear tokens: %w", thread.ErrNotFound)
	}
	return nil
}

// DeactivateLinearInstallation marks a workspace's installation revoked
// (the app was uninstalled). It reports whether an active installation was
// deactivated; an unknown or already revoked one changes nothing.
func (q *Queries) DeactivateLinearInstallation(ctx context.Context, organizationID string) (bool, error) {
	n, err := q.gen.DeactivateLinearInstallation(ctx, organizationID)
	if err != nil {
		return false, fmt.Errorf("deactivate linear installation: %w", translate(err))
	}
	return n == 1, nil
}
