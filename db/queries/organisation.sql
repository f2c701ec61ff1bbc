-- name: OrgSettingsForUpdate :one
-- OrgSettingsForUpdate reads an organisation's settings and locks them
-- until the transaction ends.
SELECT * FROM organisation_settings WHERE organisation = @organisation FOR UPDATE;

-- name: PutOrgSettings :one
INSERT INTO organisation_settings (organisation, provider, model, fast_provider, fast_model, persona)
VALUES (@organisation, @provider, @model, @fast_provider, @fast_model, @persona)
ON CONFLICT (organisation) DO UPDATE SET provider = excluded.provider, model = excluded.model,
    fast_provider = excluded.fast_provider, fast_model = excluded.fast_model, persona = excluded.persona, updated_at = now()
RETURNING *;

-- name: DeleteOrgSettings :exec
DELETE FROM organisation_settings WHERE organisation = @organisation;

-- name: Organisations :many
-- Organisations lists the organisations an operator named, by name: those
-- tenants were linked into and those with settings, each with its linked
-- tenants (kind:id) and its settings (empty where none); only @organisation
-- when given.
SELECT o.organisation::text AS organisation,
       coalesce(s.provider, '')::text AS provider, coalesce(s.model, '')::text AS model,
       coalesce(s.fast_provider, '')::text AS fast_provider, coalesce(s.fast_model, '')::text AS fast_model,
       coalesce(s.persona, '')::text AS persona, s.updated_at,
       coalesce((SELECT array_agg(t.tenant_kind || ':' || t.tenant_id ORDER BY t.tenant_kind, t.tenant_id)
                 FROM tenants t WHERE t.organisation = o.organisation), '{}')::text[] AS tenants
FROM (SELECT organisation FROM tenants UNION SELECT organisation FROM organisation_settings) o
LEFT JOIN organisation_settings s ON s.organisation = o.organisation
WHERE sqlc.narg(wanted)::text IS NULL OR o.organisation = sqlc.narg(wanted)
ORDER BY o.organisation;
