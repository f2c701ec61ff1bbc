-- Linear OAuth installations, one per workspace (organization). Tokens are
-- encrypted by weft before they reach the database (WEFT_ENCRYPTION_KEY).

-- +goose Up
CREATE TABLE linear_installations (
    organization_id   text PRIMARY KEY,
    app_user_id       text NOT NULL,
    access_token_enc  bytea NOT NULL,
    refresh_token_enc bytea,
    expires_at        timestamptz,
    scopes            text[] NOT NULL DEFAULT '{}',
    is_active         boolean NOT NULL DEFAULT true,
    installed_at      timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    revoked_at        timestamptz,

    CONSTRAINT linear_installations_revoked CHECK (is_active OR revoked_at IS NOT NULL)
);

-- +goose Down
DROP TABLE linear_installations;
