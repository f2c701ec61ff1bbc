package db

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// ThreadParent returns a thread's first input stitch (its initial prompt,
// or the first message people wrote): the parent of its replies. A thread
// without input, or no thread at all, fails with thread.ErrNotFound.
func (q *Queries) ThreadParent(ctx context.Context, threadID uuid.UUID) (*thread.Stitch, error) {
	s, err := stitchOf(q.gen.ThreadParent(ctx, threadID))
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

// ThreadReplies reads a window of a thread's messages in the order asked:
// oldest first, or newest first with Newest. It does not check the thread
// exists: an unknown thread has no replies.
//
// A message of the conversation is what a person on the thread's surface
// saw: what people wrote, and what weft said back, each once. Left out are
// the steps behind the answers: system prompts, tool calls, and LLM calls
// that only asked for tools (any text beside those calls is recorded again
// as an agent_thought). A thread_result the turn wrote itself repeats its
// llm_call's answer, so only one from the complete_thread tool (tool_name
// set) counts. The predicate is spelled out in queries/stitch.sql, in the
// stitch windows and in SearchStitches.
func (q *Queries) ThreadReplies(ctx context.Context, threadID uuid.UUID, p ReplyPage) ([]thread.Stitch, error) {
	out, err := stitchWindow(ctx, q.gen, threadID, p, true)
	if err != nil {
		return nil, fmt.Errorf("thread replies: %w", err)
	}
	return out, nil
}
