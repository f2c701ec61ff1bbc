-- Threads: one agent conversation each, whatever platforms it is attached to.

-- +goose Up
CREATE TABLE threads (
    thread_id        uuid PRIMARY KEY,
    thread_type      text NOT NULL,
    goal             text NOT NULL,
    status           text NOT NULL DEFAULT 'pending',
    -- Why a thread waits: on a human's answer to a clarification, or idle after
    -- an answer. Lets ops tell "waiting on a human" from "stuck".
    waiting_reason   text,
    result           jsonb,
    error            text,
    agent_name       text NOT NULL DEFAULT 'weft',
    -- The chain's head, kept here so an append locks one row and needs no scan.
    head_stitch_id   uuid,
    stitch_count     bigint NOT NULL DEFAULT 0,
    -- The turn lease: at most one turn per thread across replicas.
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,

    CONSTRAINT threads_type_check CHECK (thread_type IN ('autonomous', 'interactive')),
    CONSTRAINT threads_status_check CHECK (
        status IN ('pending', 'running', 'waiting', 'completed', 'failed', 'aborted')),
    CONSTRAINT threads_goal_not_empty CHECK (btrim(goal) <> ''),
    CONSTRAINT threads_waiting_reason_check CHECK (waiting_reason IN ('clarification', 'idle')),
    -- A thread has a reason to wait exactly when it waits, a result exactly when
    -- it completed, and an error exactly when it failed.
    CONSTRAINT threads_waiting_reason_when_waiting CHECK ((status = 'waiting') = (waiting_reason IS NOT NULL)),
    CONSTRAINT threads_result_when_completed CHECK ((status = 'completed') = (result IS NOT NULL)),
    CONSTRAINT threads_error_when_failed CHECK ((status = 'failed') = (error IS NOT NULL)),
    CONSTRAINT threads_lease_complete CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
    CONSTRAINT threads_stitch_count_check CHECK (stitch_count >= 0)
);

CREATE INDEX threads_status_updated_idx ON threads (status, updated_at DESC);
CREATE INDEX threads_updated_idx ON threads (updated_at DESC, thread_id DESC);
-- Finds running threads whose lease lapsed (a crashed replica's turns).
CREATE INDEX threads_lease_expires_idx ON threads (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- +goose Down
DROP TABLE threads;
