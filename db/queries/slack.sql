-- name: InsertSlackAttachment :exec
INSERT INTO slack_thread_metadata (thread_id, team_id, channel_id, thread_ts, channel_type, created_by)
VALUES (@thread_id, @team_id, @channel_id, @thread_ts, @channel_type, @created_by);

-- name: SlackAttachment :one
SELECT * FROM slack_thread_metadata WHERE thread_id = @thread_id;

-- name: ThreadBySlackThread :one
SELECT t.* FROM threads t
JOIN slack_thread_metadata s ON s.thread_id = t.thread_id
WHERE s.team_id = @team_id AND s.channel_id = @channel_id AND s.thread_ts = @thread_ts;

-- name: SetSlackActive :execrows
UPDATE slack_thread_metadata SET is_active = @is_active, updated_at = now()
WHERE team_id = @team_id AND channel_id = @channel_id AND thread_ts = @thread_ts;

-- name: ThreadBySlackLink :one
-- ThreadBySlackLink finds the thread attached to a Slack thread by its
-- channel and parent ts within one organisation: a permalink names no
-- workspace id. A rare command's lookup, so no index of its own: it scans
-- the Slack attachments.
SELECT * FROM threads WHERE thread_id = (
    SELECT thread_id FROM slack_thread_metadata
    WHERE channel_id = @channel_id AND thread_ts = @thread_ts
      AND tenant_organisation('slack', team_id) = @organisation::text
    ORDER BY updated_at DESC LIMIT 1);

-- name: SlackChannelTeam :one
-- SlackChannelTeam is the workspace of a channel weft has a thread in: a
-- channel id alone names no workspace. Rare (a Slack thread read or opened
-- by its channel), so it scans like ThreadBySlackLink.
SELECT team_id FROM slack_thread_metadata WHERE channel_id = @channel_id
ORDER BY updated_at DESC LIMIT 1;

-- name: PreviousSlackThread :one
-- PreviousSlackThread is the latest weft thread of a conversation (a DM)
-- opened before thread_ts and active since: the conversation a new
-- top-level message there continues. The attachments' unique key
-- (team_id, channel_id, thread_ts) serves it.
SELECT t.* FROM threads t
JOIN slack_thread_metadata s ON s.thread_id = t.thread_id
WHERE s.team_id = @team_id AND s.channel_id = @channel_id AND s.thread_ts < @before_ts
  AND t.updated_at >= @since
ORDER BY s.thread_ts DESC LIMIT 1;
