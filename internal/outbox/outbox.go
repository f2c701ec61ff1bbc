// Package outbox records a step of a thread (its effects) in the caller's
// transaction: the stitches, an outbox row per output for the surface the
// thread's latest input came from, a delivery job per row, and the status
// change. The turn processor and the ingester both write through it, so a
// post is always committed with the stitch it comes from and the job that
// sends it.
package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/thread"
)

// Surface is where a thread's outputs go now.
type Surface struct {
	Platform thread.Platform
	Target   string // a Linear session id or a Discord thread (channel) id
}

// Route finds the surface of the thread's newest input: an answer goes where
// the question was asked. Autonomous threads, and input from the API or the
// CLI, have none.
func Route(ctx context.Context, tx *db.Tx, threadID uuid.UUID) (*Surface, error) {
	src, err := tx.LatestInputSource(ctx, threadID)
	if err != nil {
		return nil, err
	}
	switch src {
	case thread.PlatformLinear:
		l, err := tx.LinearAttachment(ctx, threadID)
		if errors.Is(err, thread.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &Surface{Platform: thread.PlatformLinear, Target: l.SessionID}, nil
	case thread.PlatformDiscord:
		d, err := tx.DiscordAttachment(ctx, threadID)
		if errors.Is(err, thread.ErrNotFound) || (err == nil && !d.Active) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &Surface{Platform: thread.PlatformDiscord, Target: d.DiscordThreadID}, nil
	}
	return nil, nil
}

// posts reports whether a platform shows an output of this kind. Discord
// gets the conversation, not the agent's working: thoughts and actions are
// Linear's activity timeline only.
func posts(p thread.Platform, k thread.OutboxKind) bool {
	if p == thread.PlatformDiscord {
		return k == thread.OutboxResponse || k == thread.OutboxElicitation || k == thread.OutboxError || k == thread.OutboxMessage
	}
	return true
}

// sessionStatus is what a Linear session shows after an activity of kind k.
var sessionStatus = map[thread.OutboxKind]thread.SessionStatus{
	thread.OutboxThought:     thread.SessionActive,
	thread.OutboxAction:      thread.SessionActive,
	thread.OutboxElicitation: thread.SessionAwaitingInput,
	thread.OutboxResponse:    thread.SessionComplete,
	thread.OutboxError:       thread.SessionError,
}

// Write records e on the thread in tx and returns the stitches as stored.
// The caller holds the thread's row lock (db.Tx.LockThread) when it must
// order the write against an abort.
func Write(ctx context.Context, tx *db.Tx, ins job.Inserter, threadID uuid.UUID, e thread.Effects) ([]thread.Stitch, error) {
	stored := make([]thread.Stitch, 0, len(e.Stitches))
	for _, s := range e.Stitches {
		s.ThreadID = threadID
		got, err := tx.AppendStitch(ctx, s)
		if err != nil {
			return nil, err
		}
		stored = append(stored, *got)
	}
	if len(e.Outputs) > 0 {
		if err := writeOutputs(ctx, tx, ins, threadID, e.Outputs, stored); err != nil {
			return nil, err
		}
	}
	if e.Status != nil {
		if _, err := tx.SetStatus(ctx, threadID, *e.Status); err != nil {
			return nil, err
		}
	}
	return stored, nil
}

func writeOutputs(ctx context.Context, tx *db.Tx, ins job.Inserter, threadID uuid.UUID, outputs []thread.Output, stored []thread.Stitch) error {
	surface, err := Route(ctx, tx, threadID)
	if err != nil || surface == nil {
		return err
	}
	var last thread.OutboxKind
	for _, o := range outputs {
		if !posts(surface.Platform, o.Kind) {
			continue
		}
		var stitchID uuid.UUID
		if o.Stitch >= 0 && o.Stitch < len(stored) {
			stitchID = stored[o.Stitch].ID
		}
		if err := Enqueue(ctx, tx, ins, thread.Outbox{ThreadID: threadID, StitchID: stitchID, Platform: surface.Platform,
			Target: surface.Target, Kind: o.Kind}, o.OutboxBody); err != nil {
			return err
		}
		last = o.Kind
	}
	if st, ok := sessionStatus[last]; ok && surface.Platform == thread.PlatformLinear {
		if err := tx.SetLinearSessionStatus(ctx, surface.Target, st); err != nil {
			return err
		}
	}
	return nil
}

// Enqueue writes one outbox row and the job that sends it.
func Enqueue(ctx context.Context, tx *db.Tx, ins job.Inserter, o thread.Outbox, body thread.OutboxBody) error {
	o.Body = body.JSON()
	row, err := tx.InsertOutbox(ctx, o)
	if err != nil {
		return err
	}
	if _, err := ins.InsertTx(ctx, tx.Pgx(), job.Delivery{OutboxID: row.ID, ThreadID: o.ThreadID}, nil); err != nil {
		return fmt.Errorf("enqueue delivery: %w", err)
	}
	return nil
}
