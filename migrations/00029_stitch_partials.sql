-- Answers as they stream: the text a model call has written so far, for
-- the console and the API's event stream on any replica (the turn runs on
-- one replica, the page may be served by another).
--
-- A row is one thread's call in flight: after_seq is the newest stitch the
-- call answers, so a reader drops the row once a stitch of the call's
-- outcome has arrived. The turn writes it at most a few times a second and
-- only while someone watches the thread (stitch_watchers, 00015), and
-- deletes it when the call ends; each write and the delete NOTIFY the
-- stitch channel, whose listeners read the row. Partial text is never
-- worth keeping past a crash, hence UNLOGGED: no WAL for every write, and
-- a crash empties the table.

-- +goose Up
CREATE UNLOGGED TABLE stitch_partials (
    thread_id  uuid PRIMARY KEY,
    after_seq  bigint NOT NULL,
    text       text NOT NULL,
    version    bigint NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose StatementBegin
CREATE FUNCTION weft_notify_partial() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    id uuid := coalesce(NEW.thread_id, OLD.thread_id);
BEGIN
    IF EXISTS (SELECT 1 FROM stitch_watchers WHERE thread_id = id) THEN
        PERFORM pg_notify('weft_stitch', id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER stitch_partials_notify AFTER INSERT OR UPDATE OR DELETE ON stitch_partials
    FOR EACH ROW EXECUTE FUNCTION weft_notify_partial();

-- +goose Down
DROP TRIGGER stitch_partials_notify ON stitch_partials;
DROP FUNCTION weft_notify_partial();
DROP TABLE stitch_partials;
