-- Approvals: a tool call that needs a person's approval waits for it. The
-- request is an approval_request stitch and a row here, written in the
-- step's transaction; the decision an approval_decision stitch and the
-- row's decision, written together. The row's id is its request stitch's.

-- +goose Up
CREATE TABLE approvals (
    approval_id   uuid PRIMARY KEY,
    thread_id     uuid NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    -- The model's call that waits, by the id the model gave it.
    tool_call_id  text NOT NULL,
    tool_name     text NOT NULL,
    server        text NOT NULL,
    tool          text NOT NULL,
    arguments     jsonb NOT NULL,
    status        text NOT NULL DEFAULT 'pending',
    -- Who decided: a platform user id (or "weft" for a timeout), their
    -- name as shown, and where (a platform, api, console, weft).
    decided_by    text,
    decided_name  text,
    decided_via   text,
    reason        text,
    decided_at    timestamptz,
    expires_at    timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approvals_status_check CHECK (status = ANY ('{pending,approved,denied}'::text[])),
    CONSTRAINT approvals_decided_when_not_pending CHECK ((status = 'pending') = (decided_at IS NULL)),
    CONSTRAINT approvals_call_key UNIQUE (thread_id, tool_call_id)
);

-- The sweep's look for requests past their time.
CREATE INDEX approvals_pending_expiry_idx ON approvals (expires_at) WHERE status = 'pending';

ALTER TABLE threads DROP CONSTRAINT threads_waiting_reason_check,
    ADD CONSTRAINT threads_waiting_reason_check CHECK (waiting_reason = ANY ('{clarification,idle,approval}'::text[]));
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type = ANY ('{system_prompt,initial_prompt,llm_call,tool_call,thread_result,discord_message,linear_activity,agent_thought,clarification_request,error,slack_message,github_message,approval_request,approval_decision}'::text[]));

-- +goose Down
-- A chain keeps its links: the requests and decisions stay as thoughts.
UPDATE stitches SET stitch_type = 'agent_thought' WHERE stitch_type IN ('approval_request', 'approval_decision');
UPDATE threads SET waiting_reason = 'idle' WHERE waiting_reason = 'approval';
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error', 'slack_message',
    'github_message'));
ALTER TABLE threads DROP CONSTRAINT threads_waiting_reason_check,
    ADD CONSTRAINT threads_waiting_reason_check CHECK (waiting_reason = ANY ('{clarification,idle}'::text[]));
DROP TABLE approvals;
