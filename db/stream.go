package db

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// BeginStream records that a message for the answer is about to be
// created on platform (s's Target and Mode; no ids yet), and reports
// whether to create it: not when the model call answering through
// afterSeq has its outcome recorded already (the delivery posts it), nor
// when the answer has an open message (its streamer writes there).
func (q *Queries) BeginStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, s Streamed, afterSeq int64) (bool, error) {
	n, err := q.gen.BeginStream(ctx, dbsqlc.BeginStreamParams{ThreadID: threadID, AnswerSeq: s.AnswerSeq, Platform: string(platform),
		Target: s.Target, Mode: s.Mode, AfterSeq: afterSeq})
	if err != nil {
		return false, fmt.Errorf("begin stream of %s: %w", threadID, translate(err))
	}
	return n > 0, nil
}

// SaveStream records an open answer's messages on platform; saved is
// false when a delivery finished the answer meanwhile.
func (q *Queries) SaveStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, s Streamed) (saved bool, err error) {
	n, err := q.gen.SaveStream(ctx, dbsqlc.SaveStreamParams{ThreadID: threadID, AnswerSeq: s.AnswerSeq, Platform: string(platform),
		Target: s.Target, MessageIds: s.MessageIDs, Mode: s.Mode})
	if err != nil {
		return false, fmt.Errorf("save stream of %s: %w", threadID, translate(err))
	}
	return n > 0, nil
}

// Claim is what ClaimStream found.
type Claim int

// Claims.
const (
	// NotStreamed: the row's answer has no message on its target; post it.
	NotStreamed Claim = iota
	// Claimed: the messages are the row's to finish.
	Claimed
	// Creating: the answer's message is being created (for less than
	// pending); ask again in a moment.
	Creating
)

// ClaimStream finds the streamed messages that outbox row o finishes (those
// of the answer its stitch gives, on its platform and target) and marks them
// finished by o. A message still being created for less than pending is
// left for a moment (Creating); after that the row claims the answer as
// it stands, without messages. A row sent again finds the messages it
// finished before.
func (q *Queries) ClaimStream(ctx context.Context, o thread.Outbox, pending time.Duration) (Streamed, Claim, error) {
	if o.StitchID == uuid.Nil {
		return Streamed{}, NotStreamed, nil
	}
	r, err := q.gen.ClaimStream(ctx, dbsqlc.ClaimStreamParams{OutboxID: &o.ID, StitchID: o.StitchID, ThreadID: o.ThreadID,
		Platform: string(o.Platform), Target: o.Target, PendingSecs: pending.Seconds()})
	if err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return Streamed{}, NotStreamed, nil
		}
		return Streamed{}, NotStreamed, fmt.Errorf("claim stream for %s: %w", o.ID, err)
	}
	s := Streamed{AnswerSeq: r.AnswerSeq, Target: o.Target, MessageIDs: r.MessageIds, Mode: r.Mode}
	switch {
	case !r.Claimed:
		return s, Creating, nil
	case len(s.MessageIDs) == 0:
		return s, NotStreamed, nil
	}
	return s, Claimed, nil
}

// DropStream forgets an answer's message on platform that was begun but
// never made, so that its delivery does not wait for it.
func (q *Queries) DropStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, answerSeq int64) error {
	if err := q.gen.DropStream(ctx, dbsqlc.DropStreamParams{ThreadID: threadID, AnswerSeq: answerSeq, Platform: string(platform)}); err != nil {
		return fmt.Errorf("drop stream of %s: %w", threadID, translate(err))
	}
	return nil
}
