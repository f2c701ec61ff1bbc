-- name: StartTurn :one
-- The lease is taken only from nobody, from the owner itself, or from an
-- owner whose lease lapsed, and only on the thread as the turn read it.
-- The statement is its own transaction, and its last condition makes the
-- commit skip the WAL flush (as SkipCommitFlush would, one statement
-- fewer); it is evaluated on the thread's row alone, and should it run for
-- a row the others refuse, it is the flush of a commit that wrote nothing.
UPDATE threads SET lease_owner = sqlc.arg(owner)::text, lease_expires_at = now() + sqlc.arg(ttl_ms)::bigint * interval '1 millisecond'
WHERE thread_id = @thread_id AND (lease_owner IS NULL OR lease_owner = @owner OR lease_expires_at < now())
  AND status = @status AND head_stitch_id IS NOT DISTINCT FROM @head_stitch_id
  AND set_config('synchronous_commit', 'off', true) = 'off'
RETURNING *;

-- name: StartTurnRunning :one
-- StartTurnRunning is StartTurn moving the thread to running as well (the
-- caller checks the status machine allows it from status), as SetStatus
-- would; its commit skips the flush as StartTurn's does.
UPDATE threads SET lease_owner = sqlc.arg(owner)::text, lease_expires_at = now() + sqlc.arg(ttl_ms)::bigint * interval '1 millisecond',
    status = 'running', waiting_reason = NULL, result = NULL, error = NULL,
    updated_at = now(), last_activity_at = now()
WHERE thread_id = @thread_id AND (lease_owner IS NULL OR lease_owner = @owner OR lease_expires_at < now())
  AND status = @status AND head_stitch_id IS NOT DISTINCT FROM @head_stitch_id
  AND set_config('synchronous_commit', 'off', true) = 'off'
RETURNING *;

-- name: LeaseHeld :one
-- LeaseHeld says, on the database's clock, whether another owner holds a
-- live lease on the thread.
SELECT lease_owner IS NOT NULL AND lease_owner <> sqlc.arg(owner)::text AND lease_expires_at >= now() AS held
FROM threads WHERE thread_id = @thread_id;

-- name: SkipCommitFlush :exec
SELECT set_config('synchronous_commit', 'off', true);

-- name: RenewLease :one
UPDATE threads SET lease_expires_at = now() + sqlc.arg(ttl_ms)::bigint * interval '1 millisecond'
WHERE thread_id = @thread_id AND lease_owner = sqlc.arg(owner)::text
RETURNING status;

-- name: ReleaseLease :exec
UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL
WHERE thread_id = @thread_id AND lease_owner = sqlc.arg(owner)::text;

-- name: HandOverTurn :exec
-- HandOverTurn gives up owner's lease on a thread its turn was cut short
-- on, moving a running thread back to pending: nothing runs it now.
UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL,
    status = CASE WHEN status = 'running' THEN 'pending' ELSE status END,
    updated_at = now(), last_activity_at = now()
WHERE thread_id = @thread_id AND lease_owner = sqlc.arg(owner)::text;

-- name: ReleaseTurn :execrows
-- ReleaseTurn gives the lease up only while the chain is stitch_count
-- stitches long: no stitch the turn has not seen was appended meanwhile.
UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL
WHERE thread_id = @thread_id AND lease_owner = sqlc.arg(owner)::text AND stitch_count = @stitch_count;

-- name: HoldTurn :exec
-- HoldTurn raises WT001 unless owner holds the thread's lease and the
-- thread is not aborted (migration 00012).
SELECT weft_hold_turn(@thread_id, sqlc.arg(owner)::text);

-- name: LapsedThreads :many
-- LapsedThreads skips threads with a turn job (of kind) still to run, or
-- running without being the lapsed lease's owner (TurnOwner ends in
-- owner_job_sep and the job id): a failed attempt gives its lease up and
-- its retry, not another job, answers the thread, and a job looking at a
-- busy thread takes it up itself once the lease lapses. The owner's own
-- job running is the dead replica's.
SELECT t.thread_id FROM threads t
WHERE t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
  AND NOT EXISTS (
    SELECT 1 FROM river_job j
    WHERE j.kind = @kind AND j.args->>'thread_id' = t.thread_id::text
      AND (j.state IN ('available', 'pending', 'retryable', 'scheduled')
        OR (j.state = 'running' AND (t.lease_owner IS NULL OR t.lease_owner NOT LIKE ('%' || sqlc.arg(owner_job_sep)::text || j.id)))))
ORDER BY t.last_activity_at LIMIT @max_rows;

-- name: StuckTurnJobs :many
-- StuckTurnJobs lists running River jobs of kind (whose args name a
-- thread_id) older than grace_ms that never held their thread's lease
-- (TurnOwner ends in owner_job_sep and the job id) while nobody else
-- holds it either, and not yet marked for cancelling.
SELECT j.id AS job_id, t.thread_id FROM river_job j
JOIN threads t ON t.thread_id = (j.args->>'thread_id')::uuid
WHERE j.state = 'running' AND j.kind = @kind
  AND j.attempted_at < now() - sqlc.arg(grace_ms)::bigint * interval '1 millisecond'
  AND NOT j.metadata ? 'cancel_attempted_at'
  AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
  AND (t.lease_owner IS NULL OR t.lease_owner NOT LIKE ('%' || sqlc.arg(owner_job_sep)::text || j.id))
ORDER BY j.id LIMIT @max_rows;

-- name: TurnStatuses :many
-- TurnStatuses reads the threads of many turns (thread_ids[i] held by
-- owners[i]) and whether each turn still holds its lease: a replica's
-- heartbeat. A thread that no longer exists has no row.
WITH h AS (SELECT unnest(sqlc.arg(thread_ids)::uuid[]) AS thread_id, unnest(sqlc.arg(owners)::text[]) AS owner)
SELECT t.thread_id, h.owner::text AS owner, t.status, t.lease_owner IS NOT DISTINCT FROM h.owner AS held
FROM h JOIN threads t ON t.thread_id = h.thread_id;

-- name: RenewLeases :many
-- RenewLeases is RenewLease for many turns at once: a replica's heartbeat.
-- It skips the rows a write holds locked (a step being recorded), so that
-- neither waits on the other, and returns a row for each lease it renewed.
WITH h AS (SELECT unnest(sqlc.arg(thread_ids)::uuid[]) AS thread_id, unnest(sqlc.arg(owners)::text[]) AS owner),
held AS (
    SELECT t.thread_id, h.owner FROM threads t JOIN h ON t.thread_id = h.thread_id AND t.lease_owner = h.owner
    FOR NO KEY UPDATE OF t SKIP LOCKED
)
UPDATE threads t SET lease_expires_at = now() + sqlc.arg(ttl_ms)::bigint * interval '1 millisecond'
FROM held WHERE t.thread_id = held.thread_id
RETURNING t.thread_id, held.owner::text AS owner, t.status;
