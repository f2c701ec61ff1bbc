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
	// Chain returns the thread's stitches in order.
	Chain(ctx context.Context, threadID uuid.UUID) ([]thread.Stitch, error)
	// Record appends the stitches, queues the outputs and applies the status
	// change in one transaction. It fails with thread.ErrAborted when the
	// thread was aborted or the turn lost its lease; nothing is written then.
	Record(ctx context.Context, threadID uuid.UUID, e thread.Effects) error
}
