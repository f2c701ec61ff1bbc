-- name: MemoryBlocks :many
SELECT label, content, updated_at FROM memory_blocks WHERE agent_name = @agent_name ORDER BY label;

-- name: SaveMemory :exec
INSERT INTO memory_blocks (agent_name, label, content) VALUES (@agent_name, @label, @content)
ON CONFLICT (agent_name, label) DO UPDATE SET content = excluded.content, updated_at = now();
