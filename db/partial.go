package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// Partial is the text a thread's model call has written so far (see
// migration 00029).
type Partial struct {
	// AfterSeq is the newest stitch the call answers: a stitch after it
	// may be the call's outcome, which makes the partial text void.
	AfterSeq int64
	Text     string
	// Version grows with each write, so a reader sends only what changed.
	Version int64
}

// SetPartial writes a call's text so far, when someone watches the thread
// (WatchStitches); it reports whether it wrote. Each write notifies the
// thread's watchers on StitchChannel.
func (q *Queries) SetPartial(ctx context.Context, threadID uuid.UUID, afterSeq int64, text string) (bool, error) {
	n, err := q.gen.SetPartial(ctx, dbsqlc.SetPartialParams{ThreadID: threadID, AfterSeq: afterSeq, Text: text})
	if err != nil {
		return false, fmt.Errorf("set partial of %s: %w", threadID, translate(err))
	}
	return n > 0, nil
}

// ClearPartial deletes the partial text of the call answering through
// afterSeq, notifying the watchers; a later call's is left alone.
func (q *Queries) ClearPartial(ctx context.Context, threadID uuid.UUID, afterSeq int64) error {
	if err := q.gen.ClearPartial(ctx, dbsqlc.ClearPartialParams{ThreadID: threadID, AfterSeq: afterSeq}); err != nil {
		return fmt.Errorf("clear partial of %s: %w", threadID, translate(err))
	}
	return nil
}

// Partial reads a thread's partial text, or nil when no call is streaming
// to a watcher. A row whose call has its outcome recorded (an llm_call or
// error stitch after AfterSeq) reads as nil: a crash between the two can
// leave one behind.
func (q *Queries) Partial(ctx context.Context, threadID uuid.UUID) (*Partial, error) {
	r, err := q.gen.Partial(ctx, threadID)
	if err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("partial of %s: %w", threadID, err)
	}
	return &Partial{AfterSeq: r.AfterSeq, Text: r.Text, Version: r.Version}, nil
}
