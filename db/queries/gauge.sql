-- name: OutboxBacklogByPlatform :many
-- OutboxBacklogByPlatform is the outbox rows waiting to be sent, per platform, and
-- how long the oldest has waited.
SELECT platform, count(*)::bigint AS count,
    extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
FROM platform_deliveries WHERE status IN ('pending', 'sending') GROUP BY platform;

-- name: JobCounts :many
-- JobCounts counts River jobs by queue and state, finished ones excluded,
-- with a zero for each unfinished state of every queue River knows, so the
-- series exist (and alerts on them evaluate) while a queue is empty.
SELECT queue::text AS queue, state::text AS state, sum(n)::bigint AS count FROM (
    SELECT j.queue, j.state::text AS state, count(*) AS n FROM river_job j
    WHERE j.state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY j.queue, j.state
    UNION ALL
    SELECT q.name, s.state, 0::bigint FROM river_queue q
    CROSS JOIN unnest(ARRAY['available', 'pending', 'retryable', 'running', 'scheduled']) AS s(state)
) c GROUP BY queue, state;

-- name: StuckThreadCount :one
SELECT count(*)::bigint FROM stuck_threads;
