-- name: InsertOutbox :one
-- InsertOutbox queues a row; with claim_ms, one already claimed for that
-- long, its first attempt counted (see db.Write.SendingFor).
INSERT INTO platform_deliveries (delivery_id, thread_id, stitch_id, platform, target, kind, body,
    status, attempts, claimed_until)
VALUES (@delivery_id, @thread_id, @stitch_id, @platform, @target, @kind, @body,
    CASE WHEN sqlc.narg(claim_ms)::bigint IS NULL THEN 'pending' ELSE 'sending' END,
    CASE WHEN sqlc.narg(claim_ms)::bigint IS NULL THEN 0 ELSE 1 END,
    now() + sqlc.narg(claim_ms)::bigint * interval '1 millisecond')
RETURNING *;

-- name: Outbox :one
SELECT * FROM platform_deliveries WHERE delivery_id = @delivery_id;

-- name: ClaimOutbox :one
-- ClaimOutbox takes a row for sending: due, pending or claimed by a sender
-- whose claim lapsed, and first in line on its surface (no unfinished row
-- before it), so a thread's posts reach a platform in the order written.
UPDATE platform_deliveries p SET status = 'sending', attempts = attempts + 1,
    claimed_until = now() + sqlc.arg(lease_ms)::bigint * interval '1 millisecond', updated_at = now()
WHERE p.delivery_id = @delivery_id AND p.next_attempt_at <= now()
  AND (p.status = 'pending' OR (p.status = 'sending' AND p.claimed_until < now()))
  AND NOT EXISTS (
    SELECT 1 FROM platform_deliveries e
    WHERE e.thread_id = p.thread_id AND e.platform = p.platform AND e.target = p.target
      AND e.status IN ('pending', 'sending') AND (e.created_at, e.delivery_id) < (p.created_at, p.delivery_id))
RETURNING *;

-- name: DropSuperseded :execrows
-- DropSuperseded drops the progress posts (thoughts, actions, notices)
-- before an answer (a response, a question, an error) on its surface,
-- when delivery_id is one, that failed and wait to be tried again: the
-- answer makes them pointless, and posted after it they would read as
-- work still going on. A post not tried yet goes out first, as does one
-- being sent; answers keep their order among themselves.
UPDATE platform_deliveries e SET status = 'dropped', claimed_until = NULL,
    last_error = 'dropped: an answer after it was ready first', updated_at = now()
FROM platform_deliveries a
WHERE a.delivery_id = @delivery_id AND a.kind IN ('response', 'elicitation', 'error')
  AND e.thread_id = a.thread_id AND e.platform = a.platform AND e.target = a.target
  AND e.status = 'pending' AND e.attempts > 0 AND e.kind IN ('thought', 'action', 'notice')
  AND (e.created_at, e.delivery_id) < (a.created_at, a.delivery_id);

-- name: ReclaimLapsedOutbox :many
-- ReclaimLapsedOutbox releases rows whose sender's claim lapsed, skipping
-- rows another reclaim holds.
WITH lapsed AS (
    SELECT delivery_id FROM platform_deliveries
    WHERE status = 'sending' AND claimed_until < now()
    ORDER BY next_attempt_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
UPDATE platform_deliveries p SET status = 'pending', claimed_until = NULL,
    next_attempt_at = now(), updated_at = now()
FROM lapsed WHERE p.delivery_id = lapsed.delivery_id
RETURNING p.*;

-- name: MarkOutboxSent :one
-- MarkOutboxSent marks a row sent and selects the first unsent row after it
-- on its surface (NULL when none).
WITH o AS (
    UPDATE platform_deliveries u SET status = 'sent', external_id = @external_id, sent_at = now(),
        claimed_until = NULL, last_error = NULL, updated_at = now()
    WHERE u.delivery_id = @delivery_id
    RETURNING u.thread_id, u.platform, u.target, u.created_at, u.delivery_id
)
SELECT (SELECT n.delivery_id FROM platform_deliveries n
    WHERE n.thread_id = o.thread_id AND n.platform = o.platform AND n.target = o.target AND n.status = 'pending'
      AND (n.created_at, n.delivery_id) > (o.created_at, o.delivery_id)
    ORDER BY n.created_at, n.delivery_id LIMIT 1) AS next_id
FROM o;

-- name: NextInLine :one
SELECT n.delivery_id FROM platform_deliveries n
WHERE n.thread_id = @thread_id AND n.platform = @platform AND n.target = @target AND n.status = 'pending'
  AND (n.created_at, n.delivery_id) > (sqlc.arg(created_at)::timestamptz, sqlc.arg(delivery_id)::uuid)
ORDER BY n.created_at, n.delivery_id LIMIT 1;

-- name: RetryOutbox :execrows
-- The end of a claim, fenced by it: every claim counts an attempt, so the
-- row's attempts name the claim that holds it.
UPDATE platform_deliveries SET status = 'pending', last_error = sqlc.arg(last_error)::text,
    next_attempt_at = now() + sqlc.arg(after_ms)::bigint * interval '1 millisecond', claimed_until = NULL, updated_at = now()
WHERE delivery_id = @delivery_id AND status = 'sending' AND attempts = @attempts;

-- name: FailOutbox :execrows
UPDATE platform_deliveries SET status = 'failed', last_error = sqlc.arg(last_error)::text,
    claimed_until = NULL, updated_at = now()
WHERE delivery_id = @delivery_id AND status = 'sending' AND attempts = @attempts;

-- name: ThreadOutbox :many
SELECT * FROM platform_deliveries WHERE thread_id = @thread_id ORDER BY created_at, delivery_id;

-- name: StrandedOutbox :many
-- StrandedOutbox lists rows due for longer than grace_ms and first in line
-- on their surface: their delivery job was lost. A row waiting for an
-- earlier post is not stranded: that post's end wakes it, and a sweep that
-- gave it a job each time multiplied its sends.
SELECT * FROM platform_deliveries p
WHERE p.status = 'pending' AND p.next_attempt_at < now() - sqlc.arg(grace_ms)::bigint * interval '1 millisecond'
  AND NOT EXISTS (
    SELECT 1 FROM platform_deliveries e
    WHERE e.thread_id = p.thread_id AND e.platform = p.platform AND e.target = p.target
      AND e.status IN ('pending', 'sending') AND (e.created_at, e.delivery_id) < (p.created_at, p.delivery_id))
ORDER BY p.next_attempt_at LIMIT @max_rows;
