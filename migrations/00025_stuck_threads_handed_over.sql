-- A replica that shuts down mid-turn hands its thread over pending (it was
-- left running without a lease, which the console showed as running while
-- nothing ran it). stuck_threads measured a pending thread's wait from its
-- creation, so a handed-over thread created long ago would be listed at
-- once: the wait is now measured from when it last moved (last_activity_at,
-- which the hand-over sets, as the creation does).

-- +goose Up
DROP VIEW stuck_threads;
-- Threads that should be moving and are not: running with a lapsed or
-- missing lease, pending for more than two minutes since they became so
-- (created, or handed over), or holding input no
-- answer covers (an answered_through at or past it) for over 10 seconds
-- without a live lease.
CREATE VIEW stuck_threads AS
SELECT t.thread_id, t.thread_type, t.status, t.lease_owner, t.lease_expires_at,
       t.last_activity_at, now() - t.last_activity_at AS idle_for,
       CASE
           WHEN t.status = 'running' AND t.lease_expires_at IS NULL AND t.last_activity_at < now() - interval '2 minutes' THEN 'running without lease'
           WHEN t.status = 'running' AND t.last_activity_at < now() - interval '2 minutes' THEN 'lease expired'
           WHEN t.status = 'pending' AND t.last_activity_at < now() - interval '2 minutes' THEN 'pending too long'
           ELSE 'unanswered input'
       END AS reason
FROM threads t
WHERE (t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '2 minutes')
   OR (t.status = 'pending' AND t.last_activity_at < now() - interval '2 minutes')
   OR (t.status <> 'aborted' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '10 seconds'
       AND EXISTS (
           SELECT 1 FROM (
               SELECT i.seq, i.created_at FROM stitches i
               WHERE i.thread_id = t.thread_id AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity')
               ORDER BY i.seq DESC LIMIT 1
           ) input
           WHERE input.created_at < now() - interval '10 seconds'
             AND NOT EXISTS (
               SELECT 1 FROM stitches a
               WHERE a.thread_id = t.thread_id AND a.seq > input.seq
                 AND (a.metadata->>'answered_through')::bigint >= input.seq)));

-- +goose Down
DROP VIEW stuck_threads;
CREATE VIEW stuck_threads AS
SELECT t.thread_id, t.thread_type, t.status, t.lease_owner, t.lease_expires_at,
       t.last_activity_at, now() - t.last_activity_at AS idle_for,
       CASE
           WHEN t.status = 'running' AND t.lease_expires_at IS NULL AND t.last_activity_at < now() - interval '2 minutes' THEN 'running without lease'
           WHEN t.status = 'running' AND t.last_activity_at < now() - interval '2 minutes' THEN 'lease expired'
           WHEN t.status = 'pending' AND t.created_at < now() - interval '2 minutes' THEN 'pending too long'
           ELSE 'unanswered input'
       END AS reason
FROM threads t
WHERE (t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '2 minutes')
   OR (t.status = 'pending' AND t.created_at < now() - interval '2 minutes')
   OR (t.status <> 'aborted' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '10 seconds'
       AND EXISTS (
           SELECT 1 FROM (
               SELECT i.seq, i.created_at FROM stitches i
               WHERE i.thread_id = t.thread_id AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity')
               ORDER BY i.seq DESC LIMIT 1
           ) input
           WHERE input.created_at < now() - interval '10 seconds'
             AND NOT EXISTS (
               SELECT 1 FROM stitches a
               WHERE a.thread_id = t.thread_id AND a.seq > input.seq
                 AND (a.metadata->>'answered_through')::bigint >= input.seq)));
