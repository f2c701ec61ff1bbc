-- Feedback on weft's answers: a click on Slack's feedback buttons is a
-- stitch of its own type, 'feedback', in the thread of the answer it
-- rates (source_platform and external_id, unique together, keep a
-- redelivered click from becoming a second stitch). The model never
-- sees it; the console and the API show it.
--
-- The type is added to whatever the check allows when this runs, rather
-- than to a list written out here, so that stitch types other migrations
-- add alongside are kept.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
    WHERE conname = 'stitches_stitch_type_check' AND conrelid = 'stitches'::regclass;
    IF def IS NULL OR position('ARRAY[' IN def) = 0 THEN
        RAISE EXCEPTION 'stitches_stitch_type_check is not a list of types: %', def;
    END IF;
    IF position('''feedback''' IN def) > 0 THEN
        RETURN;
    END IF;
    EXECUTE 'ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check, ADD CONSTRAINT stitches_stitch_type_check '
        || replace(def, 'ARRAY[', 'ARRAY[''feedback''::text, ');
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Going down keeps each click in its place in the chain, as a note the
-- model does not see either.
UPDATE stitches SET stitch_type = 'agent_thought', content = 'Feedback: ' || coalesce(content, '')
WHERE stitch_type = 'feedback';
-- +goose StatementBegin
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
    WHERE conname = 'stitches_stitch_type_check' AND conrelid = 'stitches'::regclass;
    EXECUTE 'ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check, ADD CONSTRAINT stitches_stitch_type_check '
        || replace(def, '''feedback''::text, ', '');
END
$$;
-- +goose StatementEnd
