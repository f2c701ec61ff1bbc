-- name: StreamOfCall :one
-- StreamOfCall is the answer a model call answering through after_seq
-- writes (the newest input stitch up to it, and who wrote that) and its
-- message on platform, if one was started and is not finished. No row:
-- nothing up to after_seq is an input.
SELECT k.seq AS answer_seq, k.author_id AS asker_id, m.target, m.message_ids, m.mode
FROM (SELECT i.seq, i.author_id FROM stitches i
      WHERE i.thread_id = @thread_id AND i.seq <= @after_seq
        AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')
      ORDER BY i.seq DESC LIMIT 1) k
LEFT JOIN stream_messages m ON m.thread_id = @thread_id AND m.answer_seq = k.seq
    AND m.platform = @platform AND m.finished_by IS NULL;

-- name: BeginStream :execrows
-- BeginStream records that a message for the answer is being created on
-- platform, unless the model call answering through after_seq has its
-- outcome recorded already (its delivery will post): no row, no message.
-- A finished row of the answer is replaced, as is one whose message was
-- never made (a replica died creating it); an open one is left alone.
INSERT INTO stream_messages (thread_id, answer_seq, platform, target, message_ids, mode)
SELECT @thread_id, @answer_seq, @platform, @target, '{}', @mode
WHERE NOT EXISTS (SELECT 1 FROM stitches s WHERE s.thread_id = @thread_id AND s.seq > @after_seq
    AND s.stitch_type IN ('llm_call', 'error'))
ON CONFLICT (thread_id, answer_seq, platform) DO UPDATE
SET target = EXCLUDED.target, message_ids = EXCLUDED.message_ids, mode = EXCLUDED.mode,
    finished_by = NULL, created_at = now(), updated_at = now()
WHERE stream_messages.finished_by IS NOT NULL OR cardinality(stream_messages.message_ids) = 0;

-- name: SaveStream :execrows
-- SaveStream records an open answer's messages as the streamer has them;
-- none saved: a delivery finished the answer meanwhile.
UPDATE stream_messages SET target = @target, message_ids = @message_ids, mode = @mode, updated_at = now()
WHERE thread_id = @thread_id AND answer_seq = @answer_seq AND platform = @platform AND finished_by IS NULL;

-- name: ClaimStream :one
-- ClaimStream finds the streamed message an outbox row from stitch_id
-- finishes (the answer to the newest input up to the stitch, or up to what
-- it answered) and marks it finished by the row, unless its message is
-- still being created (no ids yet) and began less than pending_secs ago:
-- claimed is then false, to ask again. A row sent again finds the message
-- it finished.
WITH k AS (
    SELECT max(i.seq) AS answer_seq
    FROM stitches s JOIN stitches i ON i.thread_id = s.thread_id
    WHERE s.stitch_id = @stitch_id AND s.thread_id = @thread_id
      AND i.seq <= coalesce((s.metadata->>'answered_through')::bigint, s.seq)
      AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')
), m AS (
    SELECT sm.answer_seq, sm.message_ids, sm.mode,
           (cardinality(sm.message_ids) > 0 OR sm.updated_at < now() - make_interval(secs => @pending_secs::float8)) AS claimable
    FROM stream_messages sm, k
    WHERE sm.thread_id = @thread_id AND sm.answer_seq = k.answer_seq AND sm.platform = @platform AND sm.target = @target
      AND (sm.finished_by IS NULL OR sm.finished_by = @outbox_id)
    FOR UPDATE OF sm
), u AS (
    UPDATE stream_messages sm SET finished_by = @outbox_id, updated_at = now()
    FROM m WHERE m.claimable AND sm.thread_id = @thread_id AND sm.answer_seq = m.answer_seq AND sm.platform = @platform
    RETURNING sm.answer_seq
)
SELECT m.answer_seq, m.message_ids, m.mode, EXISTS (SELECT 1 FROM u) AS claimed FROM m;

-- name: DropStream :exec
-- DropStream forgets an answer's message that was never made (its
-- creation failed), so that its delivery does not wait for it.
DELETE FROM stream_messages
WHERE thread_id = @thread_id AND answer_seq = @answer_seq AND platform = @platform
  AND finished_by IS NULL AND cardinality(message_ids) = 0;
