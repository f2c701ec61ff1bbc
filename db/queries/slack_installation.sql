-- name: SaveSlackInstallation :exec
-- SaveSlackInstallation stores a new installation, or a re-install, which
-- replaces the tokens and makes it active again.
INSERT INTO slack_installations
    (team_id, team_name, enterprise_id, is_enterprise_install, app_id, bot_user_id,
     bot_token_enc, refresh_token_enc, expires_at, scopes, installed_by)
VALUES (@team_id, @team_name, @enterprise_id, @is_enterprise_install, @app_id, @bot_user_id,
        @bot_token_enc, @refresh_token_enc, @expires_at, @scopes, @installed_by)
ON CONFLICT (team_id) DO UPDATE SET
    team_name = EXCLUDED.team_name, enterprise_id = EXCLUDED.enterprise_id,
    is_enterprise_install = EXCLUDED.is_enterprise_install, app_id = EXCLUDED.app_id,
    bot_user_id = EXCLUDED.bot_user_id, bot_token_enc = EXCLUDED.bot_token_enc,
    refresh_token_enc = EXCLUDED.refresh_token_enc, expires_at = EXCLUDED.expires_at,
    scopes = EXCLUDED.scopes, installed_by = EXCLUDED.installed_by,
    is_active = true, revoked_at = NULL, installed_at = now(), updated_at = now();

-- name: SlackInstallation :one
SELECT * FROM slack_installations WHERE team_id = @team_id;

-- name: LockSlackInstallation :one
SELECT * FROM slack_installations WHERE team_id = @team_id FOR UPDATE;

-- name: UpdateSlackTokens :execrows
UPDATE slack_installations
SET bot_token_enc = @bot_token_enc, refresh_token_enc = @refresh_token_enc, expires_at = @expires_at, updated_at = now()
WHERE team_id = @team_id;

-- name: DeactivateSlackInstallation :execrows
UPDATE slack_installations
SET is_active = false, revoked_at = now(), updated_at = now()
WHERE team_id = @team_id AND is_active;
