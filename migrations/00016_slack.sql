-- Slack, the third platform: a thread attached to a Slack thread, its
-- messages as slack_message stitches, and Slack in the ledger, the outbox
-- and the ops views.

-- +goose Up
CREATE TABLE slack_thread_metadata (
    thread_id     uuid PRIMARY KEY REFERENCES threads (thread_id) ON DELETE CASCADE,
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    -- The ts of the Slack thread's parent message: with the channel, the
    -- Slack thread's identity (a ts is unique only per channel).
    thread_ts     text NOT NULL,
    channel_type  text NOT NULL DEFAULT 'channel',
    created_by    text NOT NULL,
    is_active     boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT slack_thread_metadata_thread_key UNIQUE (team_id, channel_id, thread_ts),
    CONSTRAINT slack_thread_metadata_ids_not_empty CHECK (team_id <> '' AND channel_id <> '' AND thread_ts <> ''),
    CONSTRAINT slack_thread_metadata_ts_format CHECK (thread_ts ~ '^[0-9]+\.[0-9]+$'),
    CONSTRAINT slack_thread_metadata_channel_type_check CHECK (channel_type IN ('channel', 'group', 'im', 'mpim'))
);

ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check;
ALTER TABLE stitches ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error', 'slack_message'));
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check;
ALTER TABLE stitches ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'slack', 'api', 'cli'));
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_platform_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack', 'api'));
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_platform_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'slack'));

CREATE VIEW active_slack_threads AS
SELECT t.thread_id, t.goal, t.status, t.waiting_reason, t.last_activity_at,
       s.team_id, s.channel_id, s.thread_ts, s.channel_type, s.created_by
FROM threads t
JOIN slack_thread_metadata s ON s.thread_id = t.thread_id
WHERE s.is_active AND t.thread_type = 'interactive';

-- New columns go last: CREATE OR REPLACE VIEW keeps the existing ones.
CREATE OR REPLACE VIEW cross_platform_threads AS
SELECT t.thread_id, t.goal, t.status,
       d.thread_id IS NOT NULL AS has_discord,
       l.thread_id IS NOT NULL AS has_linear,
       d.discord_thread_id, l.session_id AS linear_session_id, l.issue_identifier,
       s.thread_id IS NOT NULL AS has_slack,
       s.channel_id AS slack_channel_id, s.thread_ts AS slack_thread_ts
FROM threads t
LEFT JOIN discord_thread_metadata d ON d.thread_id = t.thread_id
LEFT JOIN linear_thread_metadata l ON l.thread_id = t.thread_id
LEFT JOIN slack_thread_metadata s ON s.thread_id = t.thread_id
WHERE t.thread_type = 'interactive';

CREATE OR REPLACE VIEW thread_overview AS
SELECT t.thread_id, t.thread_type, t.status, t.waiting_reason,
       left(t.goal, 60) AS goal,
       t.stitch_count AS stitches,
       concat_ws('+',
           CASE WHEN EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id) THEN 'linear' END,
           CASE WHEN EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id) THEN 'discord' END,
           CASE WHEN EXISTS (SELECT 1 FROM slack_thread_metadata s WHERE s.thread_id = t.thread_id) THEN 'slack' END
       ) AS platforms,
       t.created_at, t.last_activity_at
FROM threads t;

-- +goose Down
CREATE OR REPLACE VIEW thread_overview AS
SELECT t.thread_id, t.thread_type, t.status, t.waiting_reason,
       left(t.goal, 60) AS goal,
       t.stitch_count AS stitches,
       concat_ws('+',
           CASE WHEN EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id) THEN 'linear' END,
           CASE WHEN EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id) THEN 'discord' END
       ) AS platforms,
       t.created_at, t.last_activity_at
FROM threads t;
DROP VIEW cross_platform_threads;
CREATE VIEW cross_platform_threads AS
SELECT t.thread_id, t.goal, t.status,
       d.thread_id IS NOT NULL AS has_discord,
       l.thread_id IS NOT NULL AS has_linear,
       d.discord_thread_id, l.session_id AS linear_session_id, l.issue_identifier
FROM threads t
LEFT JOIN discord_thread_metadata d ON d.thread_id = t.thread_id
LEFT JOIN linear_thread_metadata l ON l.thread_id = t.thread_id
WHERE t.thread_type = 'interactive';
DROP VIEW active_slack_threads;
DELETE FROM platform_deliveries WHERE platform = 'slack';
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_platform_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_platform_check CHECK (platform IN ('linear', 'discord'));
DELETE FROM webhook_deliveries WHERE platform = 'slack';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_platform_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'api'));
-- Going down loses the conversations held in Slack threads, whole, rather
-- than leaving chains with holes.
DELETE FROM threads WHERE thread_id IN (SELECT thread_id FROM slack_thread_metadata);
UPDATE stitches SET source_platform = NULL, external_id = NULL WHERE source_platform = 'slack';
ALTER TABLE stitches DROP CONSTRAINT stitches_source_platform_check;
ALTER TABLE stitches ADD CONSTRAINT stitches_source_platform_check CHECK (source_platform IN ('discord', 'linear', 'api', 'cli'));
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check;
ALTER TABLE stitches ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type IN (
    'system_prompt', 'initial_prompt', 'llm_call', 'tool_call', 'thread_result',
    'discord_message', 'linear_activity', 'agent_thought', 'clarification_request', 'error'));
DROP TABLE slack_thread_metadata;
