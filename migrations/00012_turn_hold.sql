-- A turn records each step in one pipelined round trip. The step's writes
-- must happen only while the turn still holds the thread's lease and the
-- thread is not aborted, and a pipeline cannot branch on a result, so the
-- check raises instead: the error aborts the implicit transaction and
-- nothing after it is written. It takes the thread's row lock first, so an
-- abort (which takes it too) is ordered strictly before or after the step.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION weft_hold_turn(p_thread_id uuid, p_owner text) RETURNS void
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

-- +goose Down
DROP FUNCTION weft_hold_turn(uuid, text);
