-- Two fixes for concurrent input and one view.
--
-- A turn's step took its thread's row lock FOR UPDATE, as AppendStitch
-- did. That mode conflicts with the FOR KEY SHARE lock a foreign key check
-- takes on the thread's row (a ledger row linked to the thread, a stitch
-- inserted), so two transactions that each linked a row to the thread and
-- then appended to it waited on each other: a deadlock Postgres broke by
-- failing one (two prompts for one Linear session, 19 times in 30). FOR NO
-- KEY UPDATE orders writers of the thread just as well and leaves key
-- shares alone. AppendStitch's own lock changes in its query.
--
-- stuck_threads also lists a thread with input older than 10 seconds that
-- no answer covers while no live lease is working on it: a thread resting
-- silent with a question unanswered.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION weft_hold_turn(p_thread_id uuid, p_owner text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur_status text;
    cur_owner  text;
BEGIN
    SELECT status, lease_owner INTO cur_status, cur_owner
    FROM threads WHERE thread_id = p_thread_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'thread % not found', p_thread_id USING ERRCODE = 'no_data_found';
    END IF;
    IF cur_status = 'aborted' OR cur_owner IS DISTINCT FROM p_owner THEN
        RAISE EXCEPTION 'turn % no longer holds thread %', p_owner, p_thread_id USING ERRCODE = 'WT001';
    END IF;
END
$$;
-- +goose StatementEnd

DROP VIEW stuck_threads;
-- Threads that should be moving and are not: running with a lapsed or
-- missing lease, pending for more than two minutes, or holding input no
-- answer covers (an answered_through at or past it) for over 10 seconds
-- without a live lease.
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

-- +goose Down
DROP VIEW stuck_threads;
CREATE VIEW stuck_threads AS
SELECT t.thread_id, t.thread_type, t.status, t.lease_owner, t.lease_expires_at,
       t.last_activity_at, now() - t.last_activity_at AS idle_for,
       CASE
           WHEN t.status = 'running' AND t.lease_expires_at IS NULL THEN 'running without lease'
           WHEN t.status = 'running' THEN 'lease expired'
           ELSE 'pending too long'
       END AS reason
FROM threads t
WHERE (t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '2 minutes')
   OR (t.status = 'pending' AND t.created_at < now() - interval '2 minutes');

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION weft_hold_turn(p_thread_id uuid, p_owner text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur_status text;
    cur_owner  text;
BEGIN
    SELECT status, lease_owner INTO cur_status, cur_owner
    FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'thread % not found', p_thread_id USING ERRCODE = 'no_data_found';
    END IF;
    IF cur_status = 'aborted' OR cur_owner IS DISTINCT FROM p_owner THEN
        RAISE EXCEPTION 'turn % no longer holds thread %', p_owner, p_thread_id USING ERRCODE = 'WT001';
    END IF;
END
$$;
-- +goose StatementEnd
