-- What an append writes beyond a plain insert, cut without losing a
-- guarantee (measured with `weft-bench store` at 16 connections and
-- pg_waldump: 12.3 kB of WAL and 12.2 records an append before, 7.1 kB and
-- 10.2 after; see docs/architecture.md, Measured).
--
-- The same-thread foreign key's target becomes (stitch_id, thread_id)
-- instead of (thread_id, stitch_id): the same columns, so the same
-- guarantee, but keyed first by the time-ordered stitch id, so a new
-- stitch's entry lands on the index's rightmost page instead of on a page of its thread,
-- one random page dirtied (and after each checkpoint a full-page image, a
-- third of an append's WAL) less.
--
-- The trigram index leaves out stitches without text (most LLM and tool
-- calls): they only added a null entry per append, through the index's
-- pending list, whose one metapage every inserting backend locks in turn.
-- ILIKE never matches a NULL, so the searches' plans keep the index.
--
-- The created_at index goes: no query reads stitches by created_at alone
-- (llm_usage_daily has its own partial index).
--
-- The CHECK constraints an append evaluates (the new stitch's, and the
-- thread row's it updates) are read back from their stored expression
-- and planned again by every INSERT or UPDATE: 13-17% of an append's
-- backend CPU at 16 connections (perf). An IN list is stored as an array
-- built of one constant node per value, folded into an array at each
-- planning; an array literal is one constant. The lists' values are the
-- same, so are the constraints' names and what they accept: it took
-- their share from 17% to 13%. Keep new lists of allowed values in this
-- form.

-- +goose Up
CREATE UNIQUE INDEX stitches_stitch_thread_key ON stitches (stitch_id, thread_id);
ALTER TABLE stitches DROP CONSTRAINT stitches_previous_same_thread;
ALTER TABLE stitches DROP CONSTRAINT stitches_thread_stitch_key;
ALTER TABLE stitches ADD CONSTRAINT stitches_stitch_thread_key UNIQUE USING INDEX stitches_stitch_thread_key;
ALTER TABLE stitches ADD CONSTRAINT stitches_previous_same_thread FOREIGN KEY (thread_id, previous_stitch_id)
    REFERENCES stitches (thread_id, stitch_id);

DROP INDEX stitches_content_trgm_idx;
CREATE INDEX stitches_content_trgm_idx ON stitches USING gin (content gin_trgm_ops)
    WHERE content IS NOT NULL AND deleted_at IS NULL AND stitch_type <> 'system_prompt';

DROP INDEX stitches_created_idx;

ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type = ANY ('{system_prompt,initial_prompt,llm_call,tool_call,thread_result,discord_message,linear_activity,agent_thought,clarification_request,error,slack_message}'::text[]));
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check,
    ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform = ANY ('{discord,linear,slack,api,cli}'::text[]));
ALTER TABLE threads DROP CONSTRAINT threads_status_check,
    ADD CONSTRAINT threads_status_check CHECK (status = ANY ('{pending,running,waiting,completed,failed,aborted}'::text[]));
ALTER TABLE threads DROP CONSTRAINT threads_type_check,
    ADD CONSTRAINT threads_type_check CHECK (thread_type = ANY ('{autonomous,interactive}'::text[]));
ALTER TABLE threads DROP CONSTRAINT threads_waiting_reason_check,
    ADD CONSTRAINT threads_waiting_reason_check CHECK (waiting_reason = ANY ('{clarification,idle}'::text[]));

-- +goose Down
ALTER TABLE threads DROP CONSTRAINT threads_waiting_reason_check,
    ADD CONSTRAINT threads_waiting_reason_check CHECK (waiting_reason IN ('clarification', 'idle'));
ALTER TABLE threads DROP CONSTRAINT threads_type_check,
    ADD CONSTRAINT threads_type_check CHECK (thread_type IN ('autonomous', 'interactive'));
ALTER TABLE threads DROP CONSTRAINT threads_status_check,
    ADD CONSTRAINT threads_status_check CHECK (status IN ('pending', 'running', 'waiting', 'completed', 'failed', 'aborted'));
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check,
    ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'slack', 'api', 'cli'));
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error', 'slack_message'));

CREATE INDEX stitches_created_idx ON stitches (created_at);

DROP INDEX stitches_content_trgm_idx;
CREATE INDEX stitches_content_trgm_idx ON stitches USING gin (content gin_trgm_ops)
    WHERE deleted_at IS NULL AND stitch_type <> 'system_prompt';

ALTER TABLE stitches DROP CONSTRAINT stitches_previous_same_thread;
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_thread_key;
ALTER TABLE stitches ADD CONSTRAINT stitches_thread_stitch_key UNIQUE (thread_id, stitch_id);
ALTER TABLE stitches ADD CONSTRAINT stitches_previous_same_thread FOREIGN KEY (thread_id, previous_stitch_id)
    REFERENCES stitches (thread_id, stitch_id);
