-- name: SaveLinearInstallation :exec
-- SaveLinearInstallation stores a new installation, or a re-install, which
-- replaces the tokens and makes it active again.
INSERT INTO linear_installations
    (organization_id, app_user_id, access_token_enc, refresh_token_enc, expires_at, scopes)
VALUES (@organization_id, @app_user_id, @access_token_enc, @refresh_token_enc, @expires_at, @scopes)
ON CONFLICT (organization_id) DO UPDATE SET
    app_user_id = EXCLUDED.app_user_id, access_token_enc = EXCLUDED.access_token_enc,
    refresh_token_enc = EXCLUDED.refresh_token_enc, expires_at = EXCLUDED.expires_at,
    scopes = EXCLUDED.scopes, is_active = true, revoked_at = NULL,
    installed_at = now(), updated_at = now();

-- name: LinearInstallation :one
SELECT * FROM linear_installations WHERE organization_id = @organization_id;

-- name: LockLinearInstallation :one
SELECT * FROM linear_installations WHERE organization_id = @organization_id FOR UPDATE;

-- name: UpdateLinearTokens :execrows
UPDATE linear_installations
SET access_token_enc = @access_token_enc, refresh_token_enc = @refresh_token_enc, expires_at = @expires_at, updated_at = now()
WHERE organization_id = @organization_id;

-- name: DeactivateLinearInstallation :execrows
UPDATE linear_installations
SET is_active = false, revoked_at = now(), updated_at = now()
WHERE organization_id = @organization_id AND is_active;
