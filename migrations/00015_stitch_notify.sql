-- Live timelines: the console shows a thread's new stitches as they are
-- written, fed by LISTEN/NOTIFY rather than polling.
--
-- A NOTIFY is not free: a transaction that sent one takes a database-wide
-- lock while it commits, so notifying every stitch would serialize the
-- commits of all turns. Only watched threads notify: a console page that
-- follows a thread registers it in stitch_watchers (with the backend pid
-- of the connection that LISTENs) and removes it when the page goes away,
-- so an unwatched append costs one probe of a table that is almost always
-- empty. The payload is the thread id alone; the listener reads the rest.
-- A row left by a connection that died only costs notifies nobody hears,
-- until the next watcher clears the rows of backends that are gone.

-- +goose Up
CREATE TABLE stitch_watchers (
    thread_id  uuid NOT NULL,
    pid        integer NOT NULL,
    watched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, pid)
);

-- +goose StatementBegin
CREATE FUNCTION weft_notify_stitch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM stitch_watchers WHERE thread_id = NEW.thread_id) THEN
        PERFORM pg_notify('weft_stitch', NEW.thread_id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER stitches_notify AFTER INSERT ON stitches
    FOR EACH ROW EXECUTE FUNCTION weft_notify_stitch();

-- +goose Down
DROP TRIGGER stitches_notify ON stitches;
DROP FUNCTION weft_notify_stitch();
DROP TABLE stitch_watchers;
