package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

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

const installationColumns = `organization_id, app_user_id, access_token_enc, refresh_token_enc, expires_at,
	scopes, is_active, installed_at, updated_at, revoked_at`

func scanInstallation(row pgx.Row) (*LinearInstallation, error) {
	var (
		in               LinearInstallation
		expires, revoked pgtype.Timestamptz
	)
	err := row.Scan(&in.OrganizationID, &in.AppUserID, &in.AccessTokenEnc, &in.RefreshTokenEnc, &expires,
		&in.Scopes, &in.Active, &in.InstalledAt, &in.UpdatedAt, &revoked)
	if err != nil {
		return nil, translate(err)
	}
	in.ExpiresAt, in.RevokedAt = tm(expires), tm(revoked)
	return &in, nil
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
	_, err := q.db.Exec(ctx, `
		INSERT INTO linear_installations
			(organization_id, app_user_id, access_token_enc, refresh_token_enc, expires_at, scopes)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (organization_id) DO UPDATE SET
			app_user_id = EXCLUDED.app_user_id, access_token_enc = EXCLUDED.access_token_enc,
			refresh_token_enc = EXCLUDED.refresh_token_enc, expires_at = EXCLUDED.expires_at,
			scopes = EXCLUDED.scopes, is_active = true, revoked_at = NULL,
			installed_at = now(), updated_at = now()`,
		in.OrganizationID, in.AppUserID, in.AccessTokenEnc, in.RefreshTokenEnc, nullTime(in.ExpiresAt), scopes)
	if err != nil {
		return fmt.Errorf("save linear installation: %w", translate(err))
	}
	return nil
}

// LinearInstallation returns a workspace's installation, active or not, or
// thread.ErrNotFound.
func (q *Queries) LinearInstallation(ctx context.Context, organizationID string) (*LinearInstallation, error) {
	in, err := scanInstallation(q.db.QueryRow(ctx, `SELECT `+installationColumns+`
		FROM linear_installations WHERE organization_id = $1`, organizationID))
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
	in, err := scanInstallation(q.db.QueryRow(ctx, `SELECT `+installationColumns+`
		FROM linear_installations WHERE organization_id = $1 FOR UPDATE`, organizationID))
	if err != nil {
		return nil, fmt.Errorf("lock linear installation: %w", err)
	}
	return in, nil
}

// UpdateLinearTokens stores the token pair a refresh returned.
func (q *Queries) UpdateLinearTokens(ctx context.Context, organizationID string, accessEnc, refreshEnc []byte, expiresAt time.Time) error {
	tag, err := q.db.Exec(ctx, `UPDATE linear_installations
		SET access_token_enc = $2, refresh_token_enc = $3, expires_at = $4, updated_at = now()
		WHERE organization_id = $1`, organizationID, accessEnc, refreshEnc, nullTime(expiresAt))
	if err != nil {
		return fmt.Errorf("update linear tokens: %w", translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("update linear tokens: %w", thread.ErrNotFound)
	}
	return nil
}

// DeactivateLinearInstallation marks a workspace's installation revoked
// (the app was uninstalled). It reports whether an active installation was
// deactivated; an unknown or already revoked one changes nothing.
func (q *Queries) DeactivateLinearInstallation(ctx context.Context, organizationID string) (bool, error) {
	tag, err := q.db.Exec(ctx, `UPDATE linear_installations
		SET is_active = false, revoked_at = now(), updated_at = now()
		WHERE organization_id = $1 AND is_active`, organizationID)
	if err != nil {
		return false, fmt.Errorf("deactivate linear installation: %w", translate(err))
	}
	return tag.RowsAffected() == 1, nil
}
