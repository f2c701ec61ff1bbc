-- name: SetDiscordLastMessage :exec
-- SetDiscordLastMessage moves a Discord thread's backfill cursor forward
-- only: snowflakes compare by length, then text.
UPDATE discord_thread_metadata SET last_message_id = sqlc.arg(message_id)::text, updated_at = now()
WHERE discord_thread_id = @discord_thread_id AND (last_message_id IS NULL
    OR (length(@message_id), @message_id) > (length(last_message_id), last_message_id));

-- name: ActiveDiscordThreads :many
SELECT * FROM discord_thread_metadata
WHERE is_active AND (length(discord_thread_id), discord_thread_id) > (length(sqlc.arg(after)::text), @after)
ORDER BY length(discord_thread_id), discord_thread_id LIMIT @max_rows;

-- name: DiscordSurface :one
-- DiscordSurface is a thread's active Discord attachment, when its newest
-- input came from Discord.
SELECT d.discord_thread_id FROM discord_thread_metadata d
WHERE d.thread_id = @thread_id AND d.is_active AND (
    SELECT s.source_platform FROM stitches s
    WHERE s.thread_id = @thread_id AND s.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')
    ORDER BY s.seq DESC LIMIT 1) = 'discord';

-- name: StoredDiscordMessagesNewest :many
-- The stored messages of tracked Discord threads (the view
-- discord_thread_messages). A NULL filter does not filter; author_name
-- matches as an ILIKE substring (escaped by the caller).
-- StoredDiscordMessagesNewest reads newest first, and
-- StoredDiscordMessagesAfter the oldest after the cursor, oldest first: a
-- parameter cannot choose the order an index serves, hence two statements.
SELECT m.message_id::text AS message_id, m.thread_id, m.discord_thread_id, m.channel_id, m.guild_id,
    m.author_id, m.author_name, m.author_is_bot, m.content, m.edited_at, m.deleted_at, m.created_at
FROM discord_thread_messages m
WHERE (sqlc.narg(discord_thread_id)::text IS NULL OR m.discord_thread_id = sqlc.narg(discord_thread_id))
  AND (sqlc.narg(channel_id)::text IS NULL OR m.channel_id = sqlc.narg(channel_id))
  AND (sqlc.narg(author_id)::text IS NULL OR m.author_id = sqlc.narg(author_id))
  AND (sqlc.narg(author_name)::text IS NULL OR m.author_name ILIKE '%' || sqlc.narg(author_name) || '%')
  AND (sqlc.narg(before)::text IS NULL OR (length(m.message_id), m.message_id) < (length(sqlc.narg(before)), sqlc.narg(before)))
  AND (NOT sqlc.arg(live)::boolean OR m.deleted_at IS NULL)
ORDER BY length(m.message_id) DESC, m.message_id DESC
LIMIT @max_rows;

-- name: StoredDiscordMessagesAfter :many
SELECT m.message_id::text AS message_id, m.thread_id, m.discord_thread_id, m.channel_id, m.guild_id,
    m.author_id, m.author_name, m.author_is_bot, m.content, m.edited_at, m.deleted_at, m.created_at
FROM discord_thread_messages m
WHERE (sqlc.narg(discord_thread_id)::text IS NULL OR m.discord_thread_id = sqlc.narg(discord_thread_id))
  AND (sqlc.narg(channel_id)::text IS NULL OR m.channel_id = sqlc.narg(channel_id))
  AND (sqlc.narg(author_id)::text IS NULL OR m.author_id = sqlc.narg(author_id))
  AND (sqlc.narg(author_name)::text IS NULL OR m.author_name ILIKE '%' || sqlc.narg(author_name) || '%')
  AND (sqlc.narg(before)::text IS NULL OR (length(m.message_id), m.message_id) < (length(sqlc.narg(before)), sqlc.narg(before)))
  AND (length(m.message_id), m.message_id) > (length(sqlc.arg(after)::text), @after)
  AND (NOT sqlc.arg(live)::boolean OR m.deleted_at IS NULL)
ORDER BY length(m.message_id), m.message_id
LIMIT @max_rows;

-- name: StoredDiscordMessage :one
SELECT s.external_id::text AS message_id, s.thread_id, d.discord_thread_id, d.channel_id, d.guild_id,
    s.author_id, s.author_name, s.author_is_bot, s.content, s.edited_at, s.deleted_at, s.created_at
FROM discord_thread_metadata d JOIN stitches s ON s.thread_id = d.thread_id
WHERE s.source_platform = 'discord' AND s.external_id IS NOT NULL
  AND s.stitch_type IN ('discord_message', 'initial_prompt')
  AND s.external_id = sqlc.arg(message_id)::text;
