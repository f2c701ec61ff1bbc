-- What an organisation (weft tenant link; a tenant never linked is one of
-- its own, named '<kind>:<id>') chose for its agent, set with `weft org
-- set`: its model and fast model (a provider and a model name, both or
-- neither), and its persona. An empty setting, or no row, is the global
-- one (WEFT_MODEL, WEFT_FAST_MODEL, WEFT_PERSONA). The providers'
-- credentials stay in the environment: nothing secret is stored here. MCP
-- servers per organisation are in WEFT_MCP_CONFIG, beside the secrets and
-- processes they need.

-- +goose Up
CREATE TABLE organisation_settings (
    organisation  text PRIMARY KEY,
    provider      text NOT NULL DEFAULT '',
    model         text NOT NULL DEFAULT '',
    fast_provider text NOT NULL DEFAULT '',
    fast_model    text NOT NULL DEFAULT '',
    persona       text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT organisation_settings_organisation_check CHECK (organisation ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'
        OR organisation ~ '^(linear|discord|slack|github):[A-Za-z0-9_-]{1,64}$'),
    CONSTRAINT organisation_settings_model_check CHECK ((provider = '') = (model = '')),
    CONSTRAINT organisation_settings_fast_model_check CHECK ((fast_provider = '') = (fast_model = '')),
    CONSTRAINT organisation_settings_names_check CHECK (length(model) <= 200 AND length(fast_model) <= 200
        AND provider ~ '^[a-z]{0,32}$' AND fast_provider ~ '^[a-z]{0,32}$'),
    CONSTRAINT organisation_settings_persona_check CHECK (length(persona) <= 65536)
);

-- +goose Down
DROP TABLE organisation_settings;
