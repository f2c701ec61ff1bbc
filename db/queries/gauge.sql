-- name: OutboxBacklogByPlatform :many
-- OutboxBacklogByPlatform is the outbox rows waiting to be sent, per platform, and
-- how long the oldest has waited.
SELECT platform, count(*)::bigint AS count,
    extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
FROM platform_deliveries WHERE status IN ('pending', 'sending') GROUP BY platform;

-- name: JobCounts :many
-- JobCounts counts River jobs by queue and state, finished ones excluded.
SELECT queue, state::text AS state, count(*)::bigint AS count FROM river_job
WHERE state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY queue, state;

-- name: StuckThreadCount :one
SELECT count(*)::bigint FROM stuck_threads;
