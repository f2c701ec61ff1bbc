-- Platform attachments: a thread may be attached to a Discord thread, a Linear
-- agent session, or both (a cross-platform thread).

-- +goose Up
CREATE TABLE discord_thread_metadata (
    thread_id         uuid PRIMARY KEY REFERENCES threads (thread_id) ON DELETE CASCADE,
    discord_thread_id text NOT NULL,
    channel_id        text NOT NULL,
    guild_id          text NOT NULL,
    created_by        text NOT NULL,
    thread_name       text NOT NULL,
    -- The newest message stored, where a backfill after a reconnect starts.
    last_message_id   text,
    is_active         boolean NOT NULL DEFAULT true,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT discord_thread_metadata_discord_thread_id_key UNIQUE (discord_thread_id),
    CONSTRAINT discord_thread_metadata_snowflakes CHECK (
        discord_thread_id ~ '^[0-9]{17,20}$'
        AND channel_id ~ '^[0-9]{17,20}$'
        AND guild_id ~ '^[0-9]{17,20}$'
        AND (last_message_id IS NULL OR last_message_id ~ '^[0-9]{17,20}$')),
    CONSTRAINT discord_thread_metadata_name_length CHECK (char_length(thread_name) BETWEEN 1 AND 100)
);

CREATE INDEX discord_thread_metadata_channel_idx ON discord_thread_metadata (channel_id);

CREATE TABLE linear_thread_metadata (
    thread_id          uuid PRIMARY KEY REFERENCES threads (thread_id) ON DELETE CASCADE,
    session_id         text NOT NULL,
    workspace_id       text NOT NULL,
    issue_id           text,
    issue_identifier   text,
    issue_title        text,
    project_id         text,
    team_id            text,
    comment_id         text,
    created_by_user_id text NOT NULL,
    session_status     text NOT NULL DEFAULT 'pending',
    is_active          boolean NOT NULL DEFAULT true,
    last_activity_at   timestamptz NOT NULL DEFAULT now(),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT linear_thread_metadata_session_id_key UNIQUE (session_id),
    CONSTRAINT check_session_status CHECK (
        session_status IN ('pending', 'active', 'error', 'awaitingInput', 'complete', 'stale')),
    CONSTRAINT linear_thread_metadata_ids_not_empty CHECK (session_id <> '' AND workspace_id <> '')
);

CREATE INDEX linear_thread_metadata_issue_id_idx ON linear_thread_metadata (issue_id);
CREATE INDEX linear_thread_metadata_workspace_id_idx ON linear_thread_metadata (workspace_id);

-- +goose Down
DROP TABLE linear_thread_metadata;
DROP TABLE discord_thread_metadata;
