-- Slack OAuth v2 installations, one per workspace (team). The bot token, and
-- the refresh token when the app has token rotation on, are encrypted by
-- weft before they reach the database (WEFT_ENCRYPTION_KEY).

-- +goose Up
CREATE TABLE slack_installations (
    team_id               text PRIMARY KEY,
    team_name             text NOT NULL DEFAULT '',
    enterprise_id         text NOT NULL DEFAULT '',
    is_enterprise_install boolean NOT NULL DEFAULT false,
    app_id                text NOT NULL,
    bot_user_id           text NOT NULL,
    bot_token_enc         bytea NOT NULL,
    refresh_token_enc     bytea,
    expires_at            timestamptz,
    scopes                text[] NOT NULL DEFAULT '{}',
    installed_by          text NOT NULL DEFAULT '',
    is_active             boolean NOT NULL DEFAULT true,
    installed_at          timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    revoked_at            timestamptz,

    CONSTRAINT slack_installations_revoked CHECK (is_active OR revoked_at IS NOT NULL),
    -- a rotating token expires, and only then is there a refresh token
    CONSTRAINT slack_installations_rotation CHECK ((refresh_token_enc IS NULL) = (expires_at IS NULL))
);

-- +goose Down
DROP TABLE slack_installations;
