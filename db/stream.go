package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// Streamed is an answer streamed onto a platform (migration 00031): the
// messages its text is written into, and how.
type Streamed struct {
	// AnswerSeq is the input the answer answers: the newest input stitch
	// up to the model call's position.
	AnswerSeq int64
	// AskerID is the platform's id of who wrote that input (StreamOfCall
	// only), empty when unknown.
	AskerID string
	// Target is the outbox target the messages are in; MessageIDs their
	// platform ids in order, empty when the answer has no open message on
	// the platform yet.
	Target     string
	MessageIDs []string
	// Mode is how the text gets there: "stream" (Slack's native
	// streaming) or "edit" (post, then update).
	Mode string
}

// Stream modes.
const (
	StreamNative = "stream"
	StreamEdit   = "edit"
)

// StreamOfCall is the answer a model call answering through afterSeq
// writes, with its open (unfinished) messages on platform if it has some.
// ok is false when nothing in the thread up to afterSeq is an input (no
// answer to stream).
//
// The queries' input stitches are those of db.InputSurface.
func (q *Queries) StreamOfCall(ctx context.Context, threadID uuid.UUID, afterSeq int64, platform thread.Platform) (s Streamed, ok bool, err error) {
	r, err := q.gen.StreamOfCall(ctx, dbsqlc.StreamOfCallParams{ThreadID: threadID, AfterSeq: afterSeq, Platform: string(platform)})
	if err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return Streamed{}, false, nil
		}
		return Streamed{}, false, fmt.Errorf("stream of %s at %d: %w", threadID, afterSeq, err)
	}
	s = Streamed{AnswerSeq: r.AnswerSeq, MessageIDs: r.MessageIds}
	if r.AskerID != nil {
		s.AskerID = *r.AskerID
	}
	if r.Target != nil {
		s.Target = *r.Target
	}
	if r.Mode != nil {
		s.Mode = *r.Mode
	}
	return s, true, nil
}

// SaveStream records an answer's messages on platform. An answer whose
// message a delivery finished is left alone (saved false) unless replace:
// a streamer that found no open message starts a new one in its place.
func (q *Queries) SaveStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, s Streamed, replace bool) (saved bool, err error) {
	n, err := q.gen.SaveStream(ctx, dbsqlc.SaveStreamParams{ThreadID: threadID, AnswerSeq: s.AnswerSeq, Platform: string(platform),
		Target: s.Target, MessageIds: s.MessageIDs, Mode: s.Mode, Replace: replace})
	if err != nil {
		return false, fmt.Errorf("save stream of %s: %w", threadID, translate(err))
	}
	return n > 0, nil
}

// ClaimStream finds the streamed messages that outbox row o finishes (those
// of the answer its stitch gives, on its platform and target) and marks them
// finished by o; ok is false when the answer was not streamed there. A row
// sent again finds the messages it finished before.
func (q *Queries) ClaimStream(ctx context.Context, o thread.Outbox) (s Streamed, ok bool, err error) {
	if o.StitchID == uuid.Nil {
		return Streamed{}, false, nil
	}
	r, err := q.gen.ClaimStream(ctx, dbsqlc.ClaimStreamParams{OutboxID: &o.ID, StitchID: o.StitchID, ThreadID: o.ThreadID,
		Platform: string(o.Platform), Target: o.Target})
	if err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return Streamed{}, false, nil
		}
		return Streamed{}, false, fmt.Errorf("claim stream for %s: %w", o.ID, err)
	}
	return Streamed{AnswerSeq: r.AnswerSeq, Target: o.Target, MessageIDs: r.MessageIds, Mode: r.Mode}, true, nil
}
