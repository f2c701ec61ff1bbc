-- +goose Up
-- What was said in weft's Discord threads, as weft stored it: people's
-- messages (their stitches) and weft's own replies (outbox rows Discord
-- took, authored 'weft' as a bot). Message ids are snowflakes (a CHECK
-- constraint on stitches, Discord's answer on the outbox), so ordering by
-- (length, text) is numeric order. The Discord search tools read it, newest
-- first or after a cursor, which is why it is one view and not a copy in
-- each of their queries.
CREATE VIEW discord_thread_messages AS
SELECT m.message_id, m.thread_id, d.discord_thread_id, d.channel_id, d.guild_id,
    m.author_id, m.author_name, m.author_is_bot, m.content, m.edited_at, m.deleted_at, m.created_at
FROM discord_thread_metadata d JOIN (
    SELECT s.external_id AS message_id, s.thread_id, s.author_id, s.author_name, s.author_is_bot, s.content,
        s.edited_at, s.deleted_at, s.created_at
    FROM stitches s
    WHERE s.source_platform = 'discord' AND s.external_id IS NOT NULL
      AND s.stitch_type IN ('discord_message', 'initial_prompt')
    UNION ALL
    SELECT o.external_id, o.thread_id, NULL::text, 'weft'::text, true, coalesce(o.body->>'text', ''),
        NULL::timestamptz, NULL::timestamptz, o.created_at
    FROM platform_deliveries o
    WHERE o.platform = 'discord' AND o.status = 'sent' AND o.external_id IS NOT NULL
      AND o.kind IN ('response', 'elicitation', 'error', 'message', 'notice')
) m ON m.thread_id = d.thread_id;

-- +goose Down
DROP VIEW discord_thread_messages;
