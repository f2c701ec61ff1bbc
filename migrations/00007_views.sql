-- Views for ops: `weft ops VIEW` prints any of them.

-- +goose Up
CREATE VIEW active_linear_threads AS
SELECT t.thread_id, t.goal, t.status, t.waiting_reason, t.last_activity_at,
       l.session_id, l.workspace_id, l.issue_id, l.issue_identifier, l.issue_title, l.session_status
FROM threads t
JOIN linear_thread_metadata l ON l.thread_id = t.thread_id
WHERE l.is_active AND t.thread_type = 'interactive';

CREATE VIEW active_discord_threads AS
SELECT t.thread_id, t.goal, t.status, t.waiting_reason, t.last_activity_at,
       d.discord_thread_id, d.channel_id, d.guild_id, d.thread_name, d.last_message_id
FROM threads t
JOIN discord_thread_metadata d ON d.thread_id = t.thread_id
WHERE d.is_active AND t.thread_type = 'interactive';

CREATE VIEW cross_platform_threads AS
SELECT t.thread_id, t.goal, t.status,
       d.thread_id IS NOT NULL AS has_discord,
       l.thread_id IS NOT NULL AS has_linear,
       d.discord_thread_id, l.session_id AS linear_session_id, l.issue_identifier
FROM threads t
LEFT JOIN discord_thread_metadata d ON d.thread_id = t.thread_id
LEFT JOIN linear_thread_metadata l ON l.thread_id = t.thread_id
WHERE t.thread_type = 'interactive';

CREATE VIEW thread_overview AS
SELECT t.thread_id, t.thread_type, t.status, t.waiting_reason,
       left(t.goal, 60) AS goal,
       t.stitch_count AS stitches,
       concat_ws('+',
           CASE WHEN EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id) THEN 'linear' END,
           CASE WHEN EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id) THEN 'discord' END
       ) AS platforms,
       t.created_at, t.last_activity_at
FROM threads t;

-- Threads that should be moving and are not: running with a lapsed or missing
-- lease, or pending for more than two minutes.
CREATE VIEW stuck_threads AS
SELECT t.thread_id, t.thread_type, t.status, t.lease_owner, t.lease_expires_at,
       t.last_activity_at, now() - t.last_activity_at AS idle_for,
       CASE
           WHEN t.status = 'running' AND t.lease_expires_at IS NULL THEN 'running without lease'
           WHEN t.status = 'running' THEN 'lease expired'
           ELSE 'pending too long'
       END AS reason
FROM threads t
WHERE (t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
       AND t.last_activity_at < now() - interval '2 minutes')
   OR (t.status = 'pending' AND t.created_at < now() - interval '2 minutes');

-- Linear marks a session stale after 30 minutes without an activity.
CREATE VIEW linear_session_health AS
SELECT l.session_id, l.issue_identifier, l.session_status, t.status AS thread_status,
       l.last_activity_at, now() - l.last_activity_at AS since_activity,
       (l.session_status IN ('pending', 'active') AND l.last_activity_at < now() - interval '30 minutes') AS at_risk_of_stale,
       (SELECT count(*) FROM platform_deliveries p
         WHERE p.thread_id = l.thread_id AND p.platform = 'linear' AND p.status IN ('pending', 'sending')) AS unsent_activities
FROM linear_thread_metadata l
JOIN threads t ON t.thread_id = l.thread_id
WHERE l.is_active;

CREATE VIEW delivery_backlog AS
SELECT platform, status, count(*) AS deliveries,
       max(attempts) AS max_attempts,
       min(created_at) AS oldest,
       now() - min(created_at) AS oldest_age
FROM platform_deliveries
WHERE status <> 'sent'
GROUP BY platform, status;

CREATE VIEW daily_thread_stats AS
SELECT date_trunc('day', t.created_at)::date AS day,
       count(*) AS threads,
       count(*) FILTER (WHERE t.thread_type = 'interactive') AS interactive,
       count(*) FILTER (WHERE t.thread_type = 'autonomous') AS autonomous,
       count(*) FILTER (WHERE t.status = 'completed') AS completed,
       count(*) FILTER (WHERE t.status = 'failed') AS failed,
       count(*) FILTER (WHERE t.status = 'aborted') AS aborted,
       sum(t.stitch_count) AS stitches
FROM threads t
GROUP BY 1;

CREATE VIEW llm_usage_daily AS
SELECT date_trunc('day', s.created_at)::date AS day,
       s.model,
       count(*) AS calls,
       coalesce(sum(s.input_tokens), 0) AS input_tokens,
       coalesce(sum(s.output_tokens), 0) AS output_tokens,
       round(avg(s.latency_ms)) AS avg_latency_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY s.latency_ms) AS p95_latency_ms
FROM stitches s
WHERE s.stitch_type = 'llm_call'
GROUP BY 1, 2;

-- +goose Down
DROP VIEW llm_usage_daily;
DROP VIEW daily_thread_stats;
DROP VIEW delivery_backlog;
DROP VIEW linear_session_health;
DROP VIEW stuck_threads;
DROP VIEW thread_overview;
DROP VIEW cross_platform_threads;
DROP VIEW active_discord_threads;
DROP VIEW active_linear_threads;
