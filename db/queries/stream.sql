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

-- name: SaveStream :execrows
-- SaveStream records an answer's messages as the streamer has them. A
-- finished row is replaced only when replace is set: the streamer started
-- a new message after the old one was finished (the answer's text was
-- cut by a notice, then written again).
INSERT INTO stream_messages (thread_id, answer_seq, platform, target, message_ids, mode)
VALUES (@thread_id, @answer_seq, @platform, @target, @message_ids, @mode)
ON CONFLICT (thread_id, answer_seq, platform) DO UPDATE
SET target = EXCLUDED.target, message_ids = EXCLUDED.message_ids, mode = EXCLUDED.mode,
    finished_by = NULL, updated_at = now()
WHERE stream_messages.finished_by IS NULL OR @replace::boolean;

-- name: ClaimStream :one
-- ClaimStream finds the streamed message an outbox row from stitch_id
-- finishes (the answer to the newest input up to the stitch, or up to what
-- it answered) and marks it finished by the row; a row sent again finds
-- the message it finished.
UPDATE stream_messages m SET finished_by = @outbox_id, updated_at = now()
FROM (SELECT max(i.seq) AS answer_seq
      FROM stitches s JOIN stitches i ON i.thread_id = s.thread_id
      WHERE s.stitch_id = @stitch_id AND s.thread_id = @thread_id
        AND i.seq <= coalesce((s.metadata->>'answered_through')::bigint, s.seq)
        AND i.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity', 'slack_message', 'github_message')) k
WHERE m.thread_id = @thread_id AND m.answer_seq = k.answer_seq AND m.platform = @platform AND m.target = @target
    AND (m.finished_by IS NULL OR m.finished_by = @outbox_id)
RETURNING m.answer_seq, m.message_ids, m.mode;
