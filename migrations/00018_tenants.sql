-- Tenants and organisations. A tenant is a Linear workspace, a Discord
-- server or a Slack workspace; `weft tenant link` ties tenants into one
-- organisation. Memory, /continue and what the agent may read stop at an
-- organisation's boundary. A tenant with no row here is an organisation of
-- its own, named '<kind>:<id>' (fail closed: nothing is shared until an
-- operator links it). Names chosen by operators cannot contain ':', so they
-- never collide with those defaults.

-- +goose Up
CREATE TABLE tenants (
    tenant_kind  text NOT NULL,
    tenant_id    text NOT NULL,
    organisation text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),

    PRIMARY KEY (tenant_kind, tenant_id),
    CONSTRAINT tenants_kind_check CHECK (tenant_kind IN ('linear', 'discord', 'slack')),
    CONSTRAINT tenants_id_check CHECK (tenant_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    CONSTRAINT tenants_organisation_check CHECK (organisation ~ '^[a-z0-9][a-z0-9_.-]{0,63}$')
);

CREATE INDEX tenants_organisation_idx ON tenants (organisation);

-- tenant_organisation is the organisation of a tenant: its link, else its
-- own. A missing tenant (kind '') is the operator's organisation, ''.
-- +goose StatementBegin
CREATE FUNCTION tenant_organisation(kind text, id text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN kind = '' THEN ''
        ELSE coalesce((SELECT t.organisation FROM tenants t WHERE t.tenant_kind = kind AND t.tenant_id = id),
                      kind || ':' || id) END
$$;
-- +goose StatementEnd

-- Memory per organisation, and per person within it (person '' is the
-- organisation's own block). Blocks saved before tenants existed belong to
-- the operator's organisation '' and reach no tenant's prompt.
ALTER TABLE memory_blocks
    ADD COLUMN organisation text NOT NULL DEFAULT '',
    ADD COLUMN person text NOT NULL DEFAULT '',
    DROP CONSTRAINT memory_blocks_pkey,
    ADD PRIMARY KEY (organisation, agent_name, person, label);

-- +goose Down
DELETE FROM memory_blocks WHERE organisation <> '' OR person <> '';
ALTER TABLE memory_blocks
    DROP CONSTRAINT memory_blocks_pkey,
    DROP COLUMN organisation,
    DROP COLUMN person,
    ADD PRIMARY KEY (agent_name, label);
DROP FUNCTION tenant_organisation(text, text);
DROP TABLE tenants;
