-- name: LinkTenant :exec
-- LinkTenant puts a tenant in an organisation, moving it from any other.
INSERT INTO tenants (tenant_kind, tenant_id, organisation) VALUES (@tenant_kind, @tenant_id, @organisation)
ON CONFLICT (tenant_kind, tenant_id) DO UPDATE SET organisation = excluded.organisation, updated_at = now();

-- name: UnlinkTenant :execrows
DELETE FROM tenants WHERE tenant_kind = @tenant_kind AND tenant_id = @tenant_id;

-- name: ListTenants :many
SELECT * FROM tenants ORDER BY organisation, tenant_kind, tenant_id;

-- name: TenantOrganisation :one
SELECT tenant_organisation(@tenant_kind::text, @tenant_id::text)::text;

-- name: ThreadTenant :one
-- ThreadTenant is the tenant a thread lives in, and its organisation: its
-- Linear workspace, else its Discord server, else its Slack workspace, else its GitHub account. A
-- thread on no platform has no row.
SELECT tenant_kind::text, tenant_id::text, tenant_organisation(tenant_kind, tenant_id)::text AS organisation FROM (
    SELECT 1 AS rank, 'linear' AS tenant_kind, l.workspace_id AS tenant_id FROM linear_thread_metadata l WHERE l.thread_id = @thread_id
    UNION ALL
    SELECT 2, 'discord', d.guild_id FROM discord_thread_metadata d WHERE d.thread_id = @thread_id
    UNION ALL
    SELECT 3, 'slack', s.team_id FROM slack_thread_metadata s WHERE s.thread_id = @thread_id
    UNION ALL
    SELECT 4, 'github', g.account_id::text FROM github_thread_metadata g WHERE g.thread_id = @thread_id
) t ORDER BY rank LIMIT 1;

