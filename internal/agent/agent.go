// Package agent runs one agent turn: it reads a thread's chain of stitches,
// decides the next step (call the model, run the tools it asked for, or
// stop), and hands each step's stitches, outputs and status change to a Store
// that records them atomically. The turn keeps no state of its own, so a
// turn cut short by a crash resumes from the chain: an LLM call recorded as a
// stitch is never made again.
package agent

import (
	"context"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Store is what a turn reads and writes.
type Store interface {
	// Record writes one step of the turn (e's stitches, outputs and status
	// change) in one transaction and returns the chain after it: chain
	// with the step appended, or the chain read again when other stitches
	// (new input) were appended meanwhile. last says the step ends the turn:
	// when nothing else was appended, the store lets go of the thread with
	// the same write. Record fails with thread.ErrAborted when the thread
	// was aborted or the turn lost its lease; nothing is written then.
	Record(ctx context.Context, threadID uuid.UUID, chain []thread.Stitch, e thread.Effects, last bool) ([]thread.Stitch, error)
}
