-- name: InsertStitch :exec
-- InsertStitch adds a stitch whose position the caller already knows (a
-- new thread's first stitches).
INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq,
    stitch_type, content, llm_request, llm_response, model,
    input_tokens, output_tokens, latency_ms, tool_name, tool_input, tool_output, tool_error, metadata,
    source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at)
VALUES (@stitch_id, @thread_id, @previous_stitch_id, @seq,
    @stitch_type, @content, @llm_request, @llm_response, @model,
    @input_tokens, @output_tokens, @latency_ms, @tool_name, @tool_input, @tool_output, @tool_error, @metadata,
    @source_platform, @external_id, @author_id, @author_name, @author_is_bot, @edited_at, @deleted_at);

-- name: AppendStitch :one
-- AppendStitch appends a stitch at the head of its thread's chain in one
-- statement. The first CTE locks the thread row (the lock re-reads the row
-- as last committed, even when it had to wait), so concurrent appends to
-- one thread queue on that lock and each sees its predecessor's head and
-- count. FOR NO KEY UPDATE, not FOR UPDATE: the latter also waits on the
-- key share a foreign key check takes (a ledger row linked to the thread in
-- the same transaction), and two such transactions deadlocked. The thread's
-- updated_at stays: it is indexed (the thread list's order), so moving it
-- made every append a non-HOT update with two index entries more, the
-- largest share of what an append cost beyond a plain insert at 16
-- connections; last_activity_at (unindexed) says when the thread last had
-- a stitch. With an owner, the append is a turn's step and makes its hold
-- check under that lock rather than in a statement of its own (HoldTurn):
-- weft_hold_turn raises unless the owner holds the lease and the thread is
-- not aborted, and returns void, which is never NULL; CASE, so that no
-- other append calls it.
WITH head AS (
    SELECT thread_id, head_stitch_id, stitch_count FROM threads
    WHERE thread_id = @thread_id
      AND CASE WHEN sqlc.narg(owner)::text IS NULL THEN true ELSE weft_hold_turn(@thread_id, sqlc.narg(owner)::text) IS NOT NULL END
    FOR NO KEY UPDATE
), moved AS (
    UPDATE threads t SET head_stitch_id = @stitch_id, stitch_count = head.stitch_count + 1,
        last_activity_at = now()
    FROM head WHERE t.thread_id = head.thread_id
    RETURNING head.head_stitch_id AS previous, head.stitch_count + 1 AS seq
)
INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq,
    stitch_type, content, llm_request, llm_response, model,
    input_tokens, output_tokens, latency_ms, tool_name, tool_input, tool_output, tool_error, metadata,
    source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at)
SELECT @stitch_id, @thread_id, moved.previous, moved.seq,
    @stitch_type, @content, @llm_request, @llm_response, @model,
    @input_tokens, @output_tokens, @latency_ms, @tool_name, @tool_input, @tool_output, @tool_error, @metadata,
    @source_platform, @external_id, @author_id, @author_name, @author_is_bot, @edited_at, @deleted_at
FROM moved
-- The JSON columns are not read back: the caller has them, and turning a
-- jsonb back into text is the server's work on every append (an LLM call's
-- request is the whole conversation).
RETURNING stitch_id, thread_id, previous_stitch_id, seq, stitch_type, content,
    NULL::jsonb AS llm_request, NULL::jsonb AS llm_response,
    model, input_tokens, output_tokens, latency_ms, tool_name, NULL::jsonb AS tool_input, NULL::jsonb AS tool_output,
    tool_error, NULL::jsonb AS metadata,
    source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at, created_at;

-- name: Stitch :one
SELECT * FROM stitches WHERE stitch_id = @stitch_id;

-- name: StitchByExternalID :one
SELECT * FROM stitches WHERE source_platform = sqlc.arg(source_platform)::text AND external_id = sqlc.arg(external_id)::text;

-- name: EditStitch :one
-- EditStitch records an edit (edited_at) or a delete (deleted_at) of a
-- platform's message: the latest text, and when. An edit that leaves the
-- text as stored (only embeds or attachments changed) matches no row.
UPDATE stitches SET
    content = CASE WHEN sqlc.narg(deleted_at)::timestamptz IS NULL THEN @content ELSE content END,
    edited_at = coalesce(sqlc.narg(edited_at), edited_at),
    deleted_at = coalesce(sqlc.narg(deleted_at), deleted_at)
WHERE source_platform = sqlc.arg(source_platform)::text AND external_id = sqlc.arg(external_id)::text
  AND (sqlc.narg(deleted_at)::timestamptz IS NOT NULL OR content IS DISTINCT FROM @content)
RETURNING *;

-- name: StitchWindowAsc :many
-- The windows of a thread's stitches: seq between after and before,
-- exclusive (0: unbounded), at most max_rows, in chain order (Asc) or
-- newest first (Desc); with messages_only, only the messages of the
-- conversation (see db.Queries.ThreadReplies; SearchStitches repeats the
-- predicate). The (thread_id, seq) unique index serves the range and the
-- order; a parameter cannot choose the order, hence two statements.
SELECT * FROM stitches
WHERE thread_id = @thread_id AND (sqlc.arg(after)::bigint = 0 OR seq > @after) AND (sqlc.arg(before)::bigint = 0 OR seq < @before)
  AND (NOT sqlc.arg(messages_only)::boolean OR
    stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message', 'agent_thought', 'clarification_request', 'error')
    OR (stitch_type = 'llm_call' AND coalesce(content, '') <> '' AND coalesce(llm_response->'tool_calls', '[]') IN ('[]', 'null'))
    OR (stitch_type = 'thread_result' AND tool_name IS NOT NULL))
ORDER BY seq ASC LIMIT @max_rows;

-- name: StitchWindowDesc :many
SELECT * FROM stitches
WHERE thread_id = @thread_id AND (sqlc.arg(after)::bigint = 0 OR seq > @after) AND (sqlc.arg(before)::bigint = 0 OR seq < @before)
  AND (NOT sqlc.arg(messages_only)::boolean OR
    stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message', 'agent_thought', 'clarification_request', 'error')
    OR (stitch_type = 'llm_call' AND coalesce(content, '') <> '' AND coalesce(llm_response->'tool_calls', '[]') IN ('[]', 'null'))
    OR (stitch_type = 'thread_result' AND tool_name IS NOT NULL))
ORDER BY seq DESC LIMIT @max_rows;

-- name: ThreadParent :one
-- ThreadParent is a thread's first input stitch: its initial prompt, or the
-- first message people wrote.
SELECT * FROM stitches
WHERE thread_id = @thread_id AND stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')
ORDER BY seq LIMIT 1;

-- name: InputSurface :one
-- InputSurface is where the thread's newest input came from, and its
-- attachments there; and, since a turn reads it anyway, the thread's
-- organisation (as ThreadTenant finds it) and the agent settings it chose
-- (empty where it chose none).
SELECT s.source_platform, l.session_id, d.discord_thread_id, d.is_active,
       sl.team_id AS slack_team_id, sl.channel_id AS slack_channel_id, sl.thread_ts AS slack_thread_ts, sl.is_active AS slack_active,
       gh.installation_id AS github_installation_id, gh.repo_owner AS github_owner, gh.repo_name AS github_repo,
       gh.number AS github_number, gh.review_root_id AS github_review_root, gh.is_active AS github_active,
       org.organisation::text AS organisation, coalesce(o.provider, '')::text AS provider, coalesce(o.model, '')::text AS model,
       coalesce(o.fast_provider, '')::text AS fast_provider, coalesce(o.fast_model, '')::text AS fast_model
FROM (SELECT i.source_platform FROM stitches i
      WHERE i.thread_id = @thread_id AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')
      ORDER BY i.seq DESC LIMIT 1) s
LEFT JOIN linear_thread_metadata l ON l.thread_id = @thread_id
LEFT JOIN discord_thread_metadata d ON d.thread_id = @thread_id
LEFT JOIN slack_thread_metadata sl ON sl.thread_id = @thread_id
LEFT JOIN github_thread_metadata gh ON gh.thread_id = @thread_id
CROSS JOIN LATERAL (SELECT tenant_organisation(
    CASE WHEN l.thread_id IS NOT NULL THEN 'linear' WHEN d.thread_id IS NOT NULL THEN 'discord'
         WHEN sl.thread_id IS NOT NULL THEN 'slack' WHEN gh.thread_id IS NOT NULL THEN 'github' ELSE '' END,
    coalesce(l.workspace_id, d.guild_id, sl.team_id, gh.account_id::text, '')) AS organisation) org
LEFT JOIN organisation_settings o ON o.organisation = org.organisation;

-- name: SearchStitches :many
-- SearchStitches finds the threads whose messages (see StitchWindowAsc)
-- match pattern, with each thread's newest match and how many matched,
-- most recently matching first. The trigram index's predicate (deleted_at
-- IS NULL AND stitch_type <> 'system_prompt') is repeated literally so the
-- planner can use it.
SELECT sqlc.embed(s), m.matches FROM (
    SELECT * FROM (
        SELECT DISTINCT ON (thread_id) stitch_id, thread_id, created_at, count(*) OVER (PARTITION BY thread_id) AS matches
        FROM stitches
        WHERE content ILIKE sqlc.arg(pattern)::text ESCAPE '\' AND deleted_at IS NULL AND stitch_type <> 'system_prompt'
          AND (stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message', 'agent_thought', 'clarification_request', 'error')
            OR (stitch_type = 'llm_call' AND coalesce(content, '') <> '' AND coalesce(llm_response->'tool_calls', '[]') IN ('[]', 'null'))
            OR (stitch_type = 'thread_result' AND tool_name IS NOT NULL))
        ORDER BY thread_id, seq DESC
    ) newest
    ORDER BY created_at DESC, thread_id
    LIMIT @max_rows
) m JOIN stitches s ON s.stitch_id = m.stitch_id
ORDER BY m.created_at DESC, m.thread_id;
