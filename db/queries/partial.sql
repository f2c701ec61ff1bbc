-- name: SetPartial :execrows
-- SetPartial writes a call's text so far, only while someone watches the
-- thread: an unwatched stream costs this one probe.
INSERT INTO stitch_partials (thread_id, after_seq, text)
SELECT @thread_id, @after_seq, @text
WHERE EXISTS (SELECT 1 FROM stitch_watchers WHERE thread_id = @thread_id)
ON CONFLICT (thread_id) DO UPDATE
SET after_seq = EXCLUDED.after_seq, text = EXCLUDED.text,
    version = stitch_partials.version + 1, updated_at = now();

-- name: ClearPartial :exec
DELETE FROM stitch_partials WHERE thread_id = @thread_id AND after_seq = @after_seq;

-- name: Partial :one
-- Partial skips a row whose call has its outcome recorded (an llm_call or
-- error stitch after it), such as one a replica that crashed between the
-- two left behind.
SELECT p.after_seq, p.text, p.version FROM stitch_partials p
WHERE p.thread_id = @thread_id
    AND NOT EXISTS (SELECT 1 FROM stitches s WHERE s.thread_id = p.thread_id AND s.seq > p.after_seq
        AND s.stitch_type IN ('llm_call', 'error'));
