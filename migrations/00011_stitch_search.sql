-- Text search over the conversation: a trigram index on stitch content, for
-- search-threads' case-insensitive substring match (ILIKE '%q%').
--
-- Trigrams rather than a tsvector: conversations mix languages (the origin
-- designs are Japanese), code identifiers and ids, which a stemming text
-- search configuration splits or drops; a substring match finds them all,
-- and pg_trgm (a trusted extension since PostgreSQL 13) lets ILIKE use the
-- index. System prompts are left out of the index (and of the search): they
-- repeat the persona in every thread and would match everything. Deleted
-- messages are left out too: their text must never be found again.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX stitches_content_trgm_idx ON stitches USING gin (content gin_trgm_ops)
    WHERE deleted_at IS NULL AND stitch_type <> 'system_prompt';

-- +goose Down
DROP INDEX stitches_content_trgm_idx;
