-- name: InsertThread :one
INSERT INTO threads (thread_id, thread_type, goal, status, agent_name, stitch_count, head_stitch_id)
VALUES (@thread_id, @thread_type, @goal, @status, @agent_name, @stitch_count, @head_stitch_id)
RETURNING *;

-- name: Thread :one
SELECT * FROM threads WHERE thread_id = @thread_id;

-- name: LockThread :one
-- FOR NO KEY UPDATE, as AppendStitch: it orders the thread's writers
-- without waiting on foreign key checks that only share its key.
SELECT * FROM threads WHERE thread_id = @thread_id FOR NO KEY UPDATE;

-- name: SettleTurnStatus :one
-- SettleTurnStatus is SetStatus for a turn's last step: it moves the thread
-- only while its chain is stitch_count long, so a thread never rests
-- (waiting, completed) with input its turn has not seen. Run after the
-- step's appends, under the row lock its HoldTurn took.
UPDATE threads SET
    status = @status,
    waiting_reason = @waiting_reason,
    result = CASE WHEN @status = 'completed' THEN sqlc.arg(result)::jsonb END,
    error = CASE WHEN @status = 'failed' THEN @error END,
    finished_at = CASE WHEN @status IN ('completed', 'failed', 'aborted') THEN now() ELSE finished_at END,
    updated_at = now(),
    last_activity_at = now()
WHERE thread_id = @thread_id AND status = ANY(sqlc.arg(sources)::text[]) AND stitch_count = @stitch_count
RETURNING *;

-- name: ThreadsByID :many
SELECT * FROM threads WHERE thread_id = ANY(sqlc.arg(thread_ids)::uuid[]);

-- name: ThreadByLinearSession :one
SELECT * FROM threads
WHERE thread_id = (SELECT thread_id FROM linear_thread_metadata WHERE session_id = @session_id);

-- name: ThreadByDiscordThread :one
SELECT * FROM threads
WHERE thread_id = (SELECT thread_id FROM discord_thread_metadata WHERE discord_thread_id = @discord_thread_id);

-- name: ThreadByLinearRef :one
-- ThreadByLinearRef finds the thread of a session by a session id, issue id
-- or issue identifier (any case) within one organisation; the most
-- recently active session wins.
SELECT * FROM threads WHERE thread_id = (
    SELECT thread_id FROM linear_thread_metadata
    WHERE (session_id = @ref OR issue_id = @ref OR upper(issue_identifier) = upper(@ref))
      AND tenant_organisation('linear', workspace_id) = @organisation::text
    ORDER BY (session_id = @ref) DESC, last_activity_at DESC LIMIT 1);

-- name: SetStatus :one
-- SetStatus moves a thread to status if it is in one of sources, the
-- statuses the status machine lets the move come from.
UPDATE threads SET
    status = @status,
    waiting_reason = @waiting_reason,
    result = CASE WHEN @status = 'completed' THEN sqlc.arg(result)::jsonb END,
    error = CASE WHEN @status = 'failed' THEN @error END,
    finished_at = CASE WHEN @status IN ('completed', 'failed', 'aborted') THEN now() ELSE finished_at END,
    updated_at = now(),
    last_activity_at = now()
WHERE thread_id = @thread_id AND status = ANY(sqlc.arg(sources)::text[])
RETURNING *;

-- name: ListThreads :many
-- ListThreads lists threads newest-updated first; a NULL filter does not
-- filter, and after_updated/after_id continue a listing.
SELECT * FROM threads t
WHERE (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(thread_type)::text IS NULL OR thread_type = sqlc.narg(thread_type))
  AND (sqlc.narg(platform)::text IS NULL
       OR (sqlc.narg(platform) = 'discord' AND EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id))
       OR (sqlc.narg(platform) = 'linear' AND EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id))
       OR (sqlc.narg(platform) = 'slack' AND EXISTS (SELECT 1 FROM slack_thread_metadata s WHERE s.thread_id = t.thread_id))
       OR (sqlc.narg(platform) = 'github' AND EXISTS (SELECT 1 FROM github_thread_metadata g WHERE g.thread_id = t.thread_id)))
  AND (sqlc.narg(updated_since)::timestamptz IS NULL OR updated_at >= sqlc.narg(updated_since))
  AND (sqlc.narg(after_updated)::timestamptz IS NULL OR (updated_at, thread_id) < (sqlc.narg(after_updated), sqlc.arg(after_id)::uuid))
ORDER BY updated_at DESC, thread_id DESC
LIMIT @max_rows;
