-- name: InsertDiscordAttachment :exec
INSERT INTO discord_thread_metadata
    (thread_id, discord_thread_id, channel_id, guild_id, created_by, thread_name, last_message_id)
VALUES (@thread_id, @discord_thread_id, @channel_id, @guild_id, @created_by, @thread_name, @last_message_id);

-- name: InsertLinearAttachment :exec
INSERT INTO linear_thread_metadata
    (thread_id, session_id, workspace_id, issue_id, issue_identifier, issue_title, project_id, team_id,
     comment_id, created_by_user_id, session_status)
VALUES (@thread_id, @session_id, @workspace_id, @issue_id, @issue_identifier, @issue_title, @project_id, @team_id,
    @comment_id, @created_by_user_id, @session_status);

-- name: TouchThread :exec
UPDATE threads SET updated_at = now() WHERE thread_id = @thread_id;

-- name: DiscordAttachment :one
SELECT * FROM discord_thread_metadata WHERE thread_id = @thread_id;

-- name: SetDiscordActive :execrows
UPDATE discord_thread_metadata SET is_active = @is_active, updated_at = now()
WHERE discord_thread_id = @discord_thread_id;

-- name: LinearAttachment :one
SELECT * FROM linear_thread_metadata WHERE thread_id = @thread_id;

-- name: SetLinearSessionStatus :execrows
UPDATE linear_thread_metadata SET session_status = @session_status, last_activity_at = now(), updated_at = now()
WHERE session_id = @session_id;

-- name: MarkStaleLinearSessions :execrows
-- MarkStaleLinearSessions marks stale the sessions pending or active with
-- no activity for idle_ms.
UPDATE linear_thread_metadata SET session_status = 'stale', updated_at = now()
WHERE session_status IN ('pending', 'active') AND last_activity_at < now() - sqlc.arg(idle_ms)::bigint * interval '1 millisecond';
