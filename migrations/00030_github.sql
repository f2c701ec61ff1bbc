-- GitHub, the fourth platform: a thread attached to an issue, a pull
-- request or a review-comment thread; the app's installations; GitHub in
-- the stitches, the ledger, the outbox, the tenants and the ops views.

-- +goose Up
CREATE TABLE github_installations (
    installation_id bigint PRIMARY KEY,
    account_id      bigint NOT NULL,
    account_login   text NOT NULL,
    -- Set by a suspend, cleared by an unsuspend; an uninstall sets removed_at.
    suspended       boolean NOT NULL DEFAULT false,
    removed_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE github_thread_metadata (
    thread_id       uuid PRIMARY KEY REFERENCES threads (thread_id) ON DELETE CASCADE,
    installation_id bigint NOT NULL,
    -- The installation's account, the thread's tenant (github:ACCOUNT_ID).
    account_id      bigint NOT NULL,
    repo_id         bigint NOT NULL,
    repo_owner      text NOT NULL,
    repo_name       text NOT NULL,
    number          integer NOT NULL,
    is_pull_request boolean NOT NULL,
    -- A review-comment thread's first comment: the thread is its own
    -- conversation, beside the issue's or PR's. NULL for the issue or PR.
    review_root_id  bigint,
    created_by      text NOT NULL,
    is_active       boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT github_thread_metadata_ids_valid CHECK (installation_id > 0 AND account_id > 0 AND repo_id > 0 AND number > 0
        AND repo_owner <> '' AND repo_name <> '' AND (review_root_id IS NULL OR review_root_id > 0)),
    CONSTRAINT github_thread_metadata_review_on_pr CHECK (review_root_id IS NULL OR is_pull_request)
);
-- One thread per conversation: the issue or PR (no review root), or one
-- review thread of a PR.
CREATE UNIQUE INDEX github_thread_metadata_conversation_key
    ON github_thread_metadata (repo_id, number, coalesce(review_root_id, 0));

ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error', 'slack_message',
    'github_message'));
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check,
    ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'slack', 'github', 'api', 'cli'));
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_platform_check,
    ADD CONSTRAINT webhook_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack', 'github', 'api'));
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_platform_check,
    ADD CONSTRAINT platform_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack', 'github'));
ALTER TABLE tenants DROP CONSTRAINT tenants_kind_check,
    ADD CONSTRAINT tenants_kind_check CHECK (tenant_kind IN ('linear', 'discord', 'slack', 'github'));

CREATE VIEW active_github_threads AS
SELECT t.thread_id, t.goal, t.status, t.waiting_reason, t.last_activity_at,
       g.installation_id, g.repo_owner, g.repo_name, g.number, g.is_pull_request, g.review_root_id, g.created_by
FROM threads t
JOIN github_thread_metadata g ON g.thread_id = t.thread_id
WHERE g.is_active AND t.thread_type = 'interactive';

-- +goose Down
DROP VIEW active_github_threads;
-- Going down loses the conversations held on GitHub, whole.
DELETE FROM threads WHERE thread_id IN (SELECT thread_id FROM github_thread_metadata);
DELETE FROM tenants WHERE tenant_kind = 'github';
ALTER TABLE tenants DROP CONSTRAINT tenants_kind_check,
    ADD CONSTRAINT tenants_kind_check CHECK (tenant_kind IN ('linear', 'discord', 'slack'));
DELETE FROM platform_deliveries WHERE platform = 'github';
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_platform_check,
    ADD CONSTRAINT platform_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack'));
DELETE FROM webhook_deliveries WHERE platform = 'github';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_platform_check,
    ADD CONSTRAINT webhook_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack', 'api'));
UPDATE stitches SET source_platform = NULL, external_id = NULL WHERE source_platform = 'github';
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check,
    ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'slack', 'api', 'cli'));
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error', 'slack_message'));
DROP TABLE github_thread_metadata;
DROP TABLE github_installations;
