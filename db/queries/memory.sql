-- name: MemoryBlocks :many
-- MemoryBlocks reads the blocks of a tenant's organisation and of one
-- person in it (person '' reads only the organisation's), the
-- organisation's first.
SELECT label, content, updated_at, person FROM memory_blocks
WHERE organisation = tenant_organisation(@tenant_kind::text, @tenant_id::text)
  AND agent_name = @agent_name AND person IN ('', @person::text)
ORDER BY person, label;

-- name: PromptMemory :many
-- PromptMemory is what a new thread's system prompt reads, in one
-- statement: the blocks MemoryBlocks reads (a row of NULLs for none) and,
-- on the first row only, the persona of the tenant's organisation (empty when
-- it chose none).
WITH org AS (SELECT tenant_organisation(@tenant_kind::text, @tenant_id::text) AS organisation)
SELECT CASE WHEN row_number() OVER (ORDER BY b.person, b.label) = 1 THEN coalesce(s.persona, '') ELSE '' END::text AS persona,
       b.label, b.content, b.updated_at, b.person
FROM org
LEFT JOIN organisation_settings s ON s.organisation = org.organisation
LEFT JOIN memory_blocks b ON b.organisation = org.organisation AND b.agent_name = @agent_name AND b.person IN ('', @person::text)
ORDER BY b.person, b.label;

-- name: SaveMemory :exec
-- SaveMemory creates or replaces a block of a tenant's organisation (person
-- '') or of one person in it.
INSERT INTO memory_blocks (organisation, agent_name, person, label, content)
VALUES (tenant_organisation(@tenant_kind::text, @tenant_id::text), @agent_name, @person, @label, @content)
ON CONFLICT (organisation, agent_name, person, label) DO UPDATE SET content = excluded.content, updated_at = now();

-- name: ThreadMemoryBlocks :many
-- ThreadMemoryBlocks reads, in the round trip that reads a thread's memory
-- context (db.MemoryContext), every block the thread's memory scope can be:
-- those of agent_name in the organisation of the thread's tenant (as
-- ThreadTenant finds it; '' for a thread on no platform), of the
-- organisation itself (person '') and of each person its latest @recent
-- stitches or its Linear or Discord attachment name. The caller keeps the
-- organisation's and its scope's person's, which is one of them.
SELECT label, content, updated_at, person FROM memory_blocks
WHERE organisation = coalesce((
    SELECT tenant_organisation(tenant_kind, tenant_id) FROM (
        SELECT 1 AS rank, 'linear' AS tenant_kind, l.workspace_id AS tenant_id FROM linear_thread_metadata l WHERE l.thread_id = @thread_id
        UNION ALL
        SELECT 2, 'discord', d.guild_id FROM discord_thread_metadata d WHERE d.thread_id = @thread_id
        UNION ALL
        SELECT 3, 'slack', s.team_id FROM slack_thread_metadata s WHERE s.thread_id = @thread_id
        UNION ALL
        SELECT 4, 'github', g.account_id::text FROM github_thread_metadata g WHERE g.thread_id = @thread_id
    ) t ORDER BY rank LIMIT 1), tenant_organisation('', ''))
  AND agent_name = @agent_name
  AND (person = '' OR person IN (
    SELECT r.source_platform || ':' || r.author_id FROM (
        SELECT source_platform, author_id FROM stitches WHERE thread_id = @thread_id ORDER BY seq DESC LIMIT @recent::int
    ) r WHERE r.source_platform IS NOT NULL AND r.author_id IS NOT NULL
    UNION ALL
    SELECT 'linear:' || l.created_by_user_id FROM linear_thread_metadata l WHERE l.thread_id = @thread_id
    UNION ALL
    SELECT 'discord:' || d.created_by FROM discord_thread_metadata d WHERE d.thread_id = @thread_id))
ORDER BY person, label;

-- name: ThreadMemoryOwner :one
-- ThreadMemoryOwner is whose memory a thread's is, in one statement: its
-- tenant and organisation as ThreadTenant finds them (its Linear
-- workspace, else its Discord server, else its Slack workspace, else its
-- GitHub account; '' for a thread on no platform), and who started it on
-- Linear, else on Discord (none when it is on neither). Each attachment is
-- read once, as InputSurface reads them. Always one row, for a thread that
-- does not exist too.
SELECT t.tenant_kind, t.tenant_id, tenant_organisation(t.tenant_kind, t.tenant_id)::text AS organisation,
    CASE WHEN l.thread_id IS NOT NULL THEN 'linear' WHEN d.thread_id IS NOT NULL THEN 'discord' ELSE '' END::text AS starter_platform,
    coalesce(l.created_by_user_id, d.created_by, '')::text AS starter_id
FROM (SELECT 1) AS one
LEFT JOIN linear_thread_metadata l ON l.thread_id = @thread_id
LEFT JOIN discord_thread_metadata d ON d.thread_id = @thread_id
LEFT JOIN slack_thread_metadata sl ON sl.thread_id = @thread_id
LEFT JOIN github_thread_metadata gh ON gh.thread_id = @thread_id
CROSS JOIN LATERAL (SELECT
    CASE WHEN l.thread_id IS NOT NULL THEN 'linear' WHEN d.thread_id IS NOT NULL THEN 'discord'
         WHEN sl.thread_id IS NOT NULL THEN 'slack' WHEN gh.thread_id IS NOT NULL THEN 'github' ELSE '' END::text AS tenant_kind,
    coalesce(l.workspace_id, d.guild_id, sl.team_id, gh.account_id::text, '')::text AS tenant_id) t;
