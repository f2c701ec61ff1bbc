-- Stitches: the steps of a thread, chained by previous_stitch_id and numbered by seq.

-- +goose Up
CREATE TABLE stitches (
    stitch_id          uuid PRIMARY KEY,
    thread_id          uuid NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    previous_stitch_id uuid,
    seq                bigint NOT NULL,
    stitch_type        text NOT NULL,
    -- Human-readable text of the step: a message, a prompt, a thought, an answer.
    content            text,
    llm_request        jsonb,
    llm_response       jsonb,
    model              text,
    input_tokens       integer,
    output_tokens      integer,
    latency_ms         integer,
    tool_name          text,
    tool_input         jsonb,
    tool_output        jsonb,
    tool_error         boolean,
    metadata           jsonb,
    -- Where the step came from, unique together so a redelivered message can
    -- never become a second stitch.
    source_platform    text,
    external_id        text,
    author_id          text,
    author_name        text,
    author_is_bot      boolean,
    edited_at          timestamptz,
    deleted_at         timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
        'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
        'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error')),
    CONSTRAINT stitches_seq_positive CHECK (seq >= 1),
    -- The root, and only the root, has no predecessor.
    CONSTRAINT stitches_root_is_first CHECK ((previous_stitch_id IS NULL) = (seq = 1)),
    CONSTRAINT stitches_thread_seq_key UNIQUE (thread_id, seq),
    -- At most one successor per stitch: the chain never forks.
    CONSTRAINT stitches_one_successor UNIQUE (previous_stitch_id),
    -- Target of the same-thread foreign key below.
    CONSTRAINT stitches_thread_stitch_key UNIQUE (thread_id, stitch_id),
    -- The predecessor lives in the same thread.
    CONSTRAINT stitches_previous_same_thread FOREIGN KEY (thread_id, previous_stitch_id)
        REFERENCES stitches (thread_id, stitch_id),
    CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'api', 'cli')),
    CONSTRAINT stitches_source_complete CHECK ((external_id IS NULL) OR (source_platform IS NOT NULL)),
    CONSTRAINT stitches_source_external_key UNIQUE (source_platform, external_id),
    -- Discord ids are snowflakes: 17 to 20 decimal digits.
    CONSTRAINT stitches_discord_snowflake CHECK (
        source_platform IS DISTINCT FROM 'discord' OR external_id IS NULL OR external_id ~ '^[0-9]{17,20}$'),
    CONSTRAINT stitches_tokens_check CHECK (input_tokens >= 0 AND output_tokens >= 0 AND latency_ms >= 0)
);

-- One root per thread.
CREATE UNIQUE INDEX stitches_one_root ON stitches (thread_id) WHERE previous_stitch_id IS NULL;
CREATE INDEX stitches_created_idx ON stitches (created_at);
-- llm_usage_daily and search over LLM calls.
CREATE INDEX stitches_llm_calls_idx ON stitches (created_at) WHERE stitch_type = 'llm_call';

-- +goose Down
DROP TABLE stitches;
