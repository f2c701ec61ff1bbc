-- name: MemoryBlocks :many
-- MemoryBlocks reads the blocks of a tenant's organisation and of one
-- person in it (person '' reads only the organisation's), the
-- organisation's first.
SELECT label, content, updated_at, person FROM memory_blocks
WHERE organisation = tenant_organisation(@tenant_kind::text, @tenant_id::text)
  AND agent_name = @agent_name AND person IN ('', @person::text)
ORDER BY person, label;

-- name: SaveMemory :exec
-- SaveMemory creates or replaces a block of a tenant's organisation (person
-- '') or of one person in it.
INSERT INTO memory_blocks (organisation, agent_name, person, label, content)
VALUES (tenant_organisation(@tenant_kind::text, @tenant_id::text), @agent_name, @person, @label, @content)
ON CONFLICT (organisation, agent_name, person, label) DO UPDATE SET content = excluded.content, updated_at = now();
