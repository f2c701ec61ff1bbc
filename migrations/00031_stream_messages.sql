-- Answers streamed onto a platform: the message (or messages) a model
-- call's text is being written into on Slack or Discord, so that the
-- answer stays one message whatever happens while it is written.
--
-- A row is one answer on one platform: answer_seq is the newest input
-- stitch (a person's message or prompt) the answer answers, so the model
-- calls of one turn answering it (a call cut and retried, a call resumed
-- by another replica after a crash, the calls between tool runs) write
-- into the same message rather than each posting its own. message_ids are
-- the platform's ids of its messages in order (a Slack ts, Discord
-- snowflakes; more than one once the text outgrows a message); mode is how
-- the text gets there (Slack: 'stream', its native streaming, or 'edit',
-- post and update; Discord: 'edit'). A row without message_ids is a
-- message being created: written before the platform call, and only while
-- the model call's outcome is not recorded, so that the delivery, which
-- comes after the outcome, either finds it (and waits a moment for its
-- ids) or knows no message will be made. The delivery of the outbox row that
-- carries the answer finishes the message instead of posting a new one,
-- and marks the row finished_by itself, in the same statement that finds
-- it: a finished row is never written to again, and a row sent twice
-- finds the message it finished. Logged, unlike stitch_partials: a replica
-- that died mid-stream leaves the row for the one that resumes.

-- +goose Up
CREATE TABLE stream_messages (
    thread_id   uuid NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    answer_seq  bigint NOT NULL,
    platform    text NOT NULL CHECK (platform IN ('slack', 'discord')),
    target      text NOT NULL,
    message_ids text[] NOT NULL,
    mode        text NOT NULL CHECK (mode IN ('stream', 'edit')),
    finished_by uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, answer_seq, platform)
);

-- +goose Down
DROP TABLE stream_messages;
