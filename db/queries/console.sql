-- name: ConsoleThreads :many
-- ConsoleThreads lists threads newest-updated first, a page at a time; a
-- NULL filter does not filter. The page is chosen first (through
-- threads_updated_idx, however deep), the stuck flags worked out once per
-- row it reads, then its attachment flags for the rows shown only: over
-- the whole table the planner would hash both attachment tables for the
-- EXISTS (190 ms at 100,000 threads). A platform
-- other than linear, discord, slack or github means attached nowhere (API and CLI
-- threads). The stuck conditions: running with its lease lapsed; input
-- from a person as the newest stitch with no turn on it; a post due for
-- longer than the grace.
WITH page AS (
    SELECT t.thread_id, stuck.lease_lapsed, stuck.unanswered, stuck.stranded
    FROM threads t, LATERAL (SELECT
        (t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
            AND t.last_activity_at < now() - sqlc.arg(grace_ms)::bigint * interval '1 millisecond') AS lease_lapsed,
        (t.status <> 'running' AND t.last_activity_at < now() - sqlc.arg(grace_ms)::bigint * interval '1 millisecond'
            AND EXISTS (SELECT 1 FROM stitches h WHERE h.stitch_id = t.head_stitch_id
                AND h.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message') AND h.author_is_bot IS NOT TRUE)) AS unanswered,
        EXISTS (SELECT 1 FROM platform_deliveries p WHERE p.thread_id = t.thread_id
            AND p.status = 'pending' AND p.next_attempt_at < now() - sqlc.arg(grace_ms)::bigint * interval '1 millisecond') AS stranded
    ) stuck
    WHERE (sqlc.narg(status)::text IS NULL OR t.status = sqlc.narg(status))
      AND (sqlc.narg(thread_type)::text IS NULL OR t.thread_type = sqlc.narg(thread_type))
      AND (sqlc.narg(platform)::text IS NULL
           OR (sqlc.narg(platform) = 'linear' AND EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id))
           OR (sqlc.narg(platform) = 'discord' AND EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id))
           OR (sqlc.narg(platform) = 'slack' AND EXISTS (SELECT 1 FROM slack_thread_metadata s WHERE s.thread_id = t.thread_id))
           OR (sqlc.narg(platform) = 'github' AND EXISTS (SELECT 1 FROM github_thread_metadata g WHERE g.thread_id = t.thread_id))
           OR (sqlc.narg(platform) NOT IN ('linear', 'discord', 'slack', 'github')
               AND NOT EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id)
               AND NOT EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id)
               AND NOT EXISTS (SELECT 1 FROM slack_thread_metadata s WHERE s.thread_id = t.thread_id)
               AND NOT EXISTS (SELECT 1 FROM github_thread_metadata g WHERE g.thread_id = t.thread_id)))
      AND (NOT sqlc.arg(stuck_only)::boolean OR stuck.lease_lapsed OR stuck.unanswered OR stuck.stranded)
      -- Through stitches_content_trgm_idx. A thread's goal is its initial
      -- prompt's text, so searching stitches finds goals too.
      AND (sqlc.narg(search)::text IS NULL OR t.thread_id IN (SELECT s.thread_id FROM stitches s
           WHERE s.content ILIKE sqlc.narg(search) AND s.deleted_at IS NULL AND s.stitch_type <> 'system_prompt'))
      AND (sqlc.narg(after_updated)::timestamptz IS NULL OR (t.updated_at, t.thread_id) < (sqlc.narg(after_updated), sqlc.arg(after_id)::uuid))
    ORDER BY t.updated_at DESC, t.thread_id DESC
    LIMIT sqlc.arg(max_rows)::int
)
SELECT sqlc.embed(threads),
    EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = threads.thread_id)::boolean AS on_linear,
    EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = threads.thread_id)::boolean AS on_discord,
    EXISTS (SELECT 1 FROM slack_thread_metadata s WHERE s.thread_id = threads.thread_id)::boolean AS on_slack,
    EXISTS (SELECT 1 FROM github_thread_metadata g WHERE g.thread_id = threads.thread_id)::boolean AS on_github,
    page.lease_lapsed::boolean AS lease_lapsed, page.unanswered::boolean AS unanswered, page.stranded::boolean AS stranded
FROM threads JOIN page USING (thread_id)
ORDER BY threads.updated_at DESC, threads.thread_id DESC;

-- name: ConsoleStitches :many
-- ConsoleStitches reads a thread's stitches after seq after, in chain
-- order, with the LLM bodies left out (they carry the whole conversation
-- each, and are read one at a time when an operator opens them).
SELECT stitch_id, thread_id, previous_stitch_id, seq, stitch_type, content,
    NULL::jsonb AS llm_request, NULL::jsonb AS llm_response,
    model, input_tokens, output_tokens, latency_ms, tool_name, tool_input, tool_output, tool_error, metadata,
    source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at, created_at,
    (llm_request IS NOT NULL)::boolean AS has_request, (llm_response IS NOT NULL)::boolean AS has_response
FROM stitches WHERE thread_id = @thread_id AND seq > sqlc.arg(after)::bigint ORDER BY seq LIMIT sqlc.arg(max_rows)::int;

-- name: LLMBodies :one
SELECT llm_request, llm_response FROM stitches WHERE stitch_id = @stitch_id AND thread_id = @thread_id;

-- name: OutboxBacklog :many
-- OutboxBacklog lists posts not yet sent, oldest first.
SELECT * FROM platform_deliveries WHERE status <> 'sent' ORDER BY created_at LIMIT sqlc.arg(max_rows)::int;

-- name: RecentDeliveries :many
SELECT platform, delivery_id, event_type, action, outcome, thread_id, received_at
FROM webhook_deliveries ORDER BY received_at DESC LIMIT sqlc.arg(max_rows)::int;

-- name: LLMUsageSince :many
SELECT day::timestamptz AS day, coalesce(model, '')::text AS model, calls::bigint AS calls,
    input_tokens::bigint AS input_tokens, output_tokens::bigint AS output_tokens
FROM llm_usage_daily WHERE day >= sqlc.arg(since)::timestamptz::date ORDER BY day, model;

-- name: WatchStitches :exec
-- WatchStitches first clears the rows of backends that are gone.
WITH gone AS (
    DELETE FROM stitch_watchers w
    WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a WHERE a.pid = w.pid)
)
INSERT INTO stitch_watchers (thread_id, pid) VALUES (@thread_id, @pid) ON CONFLICT DO NOTHING;

-- name: UnwatchStitches :exec
DELETE FROM stitch_watchers WHERE thread_id = @thread_id AND pid = @pid;
