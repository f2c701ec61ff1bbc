-- The predecessor lives in the same thread, checked without a row lock.
--
-- As a foreign key, the rule locked the predecessor's row (FOR KEY SHARE)
-- on every append: a write to an old page of stitches, with its WAL record
-- (a full-page image after each checkpoint) and, once the table outgrows
-- shared_buffers, a dirty page to evict. With 16 connections appending to
-- a million stitches, that kept bench store's append/insert ratio near
-- 0.2 where a plain insert writes only new pages. The lock guarded nothing
-- appends need: stitches are deleted only with their thread, whose row an
-- append holds, and AppendStitch takes the predecessor from that row. A
-- trigger checks the same rule with a read, and fails as the foreign key
-- did (23503, same constraint name), so forged inserts are still refused.
-- (thread_id, stitch_id) was unique only as the foreign key's target:
-- stitch_id alone is the key, so its index goes too, one index write less
-- per append.

-- +goose Up
ALTER TABLE stitches DROP CONSTRAINT stitches_previous_same_thread;
ALTER TABLE stitches DROP CONSTRAINT stitches_thread_stitch_key;

-- +goose StatementBegin
CREATE FUNCTION weft_previous_same_thread() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.previous_stitch_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM stitches WHERE stitch_id = NEW.previous_stitch_id AND thread_id = NEW.thread_id) THEN
        RAISE EXCEPTION 'stitch % follows %, which is not a stitch of thread %',
            NEW.stitch_id, NEW.previous_stitch_id, NEW.thread_id
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'stitches_previous_same_thread',
                  TABLE = 'stitches', SCHEMA = 'public';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER stitches_previous_same_thread BEFORE INSERT OR UPDATE OF thread_id, previous_stitch_id ON stitches
    FOR EACH ROW EXECUTE FUNCTION weft_previous_same_thread();

-- +goose Down
DROP TRIGGER stitches_previous_same_thread ON stitches;
DROP FUNCTION weft_previous_same_thread();
ALTER TABLE stitches ADD CONSTRAINT stitches_thread_stitch_key UNIQUE (thread_id, stitch_id);
ALTER TABLE stitches ADD CONSTRAINT stitches_previous_same_thread FOREIGN KEY (thread_id, previous_stitch_id)
    REFERENCES stitches (thread_id, stitch_id);
