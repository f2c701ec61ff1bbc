package db

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// inputTypes are the stitch types a thread's parent message may be: the
// first thing someone said.
const inputTypes = `('initial_prompt', 'discord_message', 'linear_activity')`

// isMessage is the SQL predicate for a stitch that is a message of the
// conversation, as a person on the thread's surface saw it: what people
// wrote, and what weft said back, each once. Left out are the steps behind
// the answers: system prompts, tool calls, and LLM calls that only asked for
// tools (any text beside those calls is recorded again as an agent_thought).
// A thread_result the turn wrote itself repeats its llm_call's answer, so
// only one from the complete_thread tool (tool_name set) counts.
const isMessage = `(stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity',
		'agent_thought', 'clarification_request', 'error')
	OR (stitch_type = 'llm_call' AND coalesce(content, '') <> ''
		AND coalesce(llm_response->'tool_calls', '[]') IN ('[]', 'null'))
	OR (stitch_type = 'thread_result' AND tool_name IS NOT NULL))`

// ThreadParent returns a thread's first input stitch (its initial prompt,
// or the first message people wrote): the parent of its replies. A thread
// without input, or no thread at all, fails with thread.ErrNotFound.
func (q *Queries) ThreadParent(ctx context.Context, threadID uuid.UUID) (*thread.Stitch, error) {
	s, err := scanStitch(q.db.QueryRow(ctx, `SELECT `+stitchColumns+` FROM stitches
		WHERE thread_id = $1 AND stitch_type IN `+inputTypes+`
		ORDER BY seq LIMIT 1`, threadID))
	if err != nil {
		return nil, fmt.Errorf("thread parent: %w", err)
	}
	return s, nil
}

// ReplyPage selects a window of a thread's replies, as StitchPage does for
// all its stitches.
type ReplyPage = StitchPage

// MaxReplyPage bounds one read of a thread's replies.
const MaxReplyPage = MaxStitchPage

// ThreadReplies reads a window of a thread's messages (see isMessage) in
// the order asked: oldest first, or newest first with Newest. It does not
// check the thread exists: an unknown thread has no replies.
func (q *Queries) ThreadReplies(ctx context.Context, threadID uuid.UUID, p ReplyPage) ([]thread.Stitch, error) {
	out, err := q.stitchWindow(ctx, threadID, p, isMessage)
	if err != nil {
		return nil, fmt.Errorf("thread replies: %w", err)
	}
	return out, nil
}
