package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
)

// Continue attaches a thread to a new conversation on another platform,
// in one transaction with what announces it: the summary posted there,
// and, when the thread has an attachment on c.Told(), c's notices there.
// From then on the thread's answers go wherever its latest input came
// from. A thread attached on that platform already fails with
// thread.ErrAlreadyAttached.
func (in *Ingester) Continue(ctx context.Context, c thread.Continuation) error {
	platform, target, err := c.Surface()
	if err != nil {
		return fmt.Errorf("continue thread %s: %w", c.ThreadID, err)
	}
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if err := tx.Attach(ctx, c.Attachment()); err != nil {
			return err
		}
		err := outbox.Enqueue(ctx, tx, in.jobs, thread.Outbox{ThreadID: c.ThreadID, Platform: platform,
			Target: target, Kind: thread.OutboxMessage}, thread.OutboxBody{Text: c.Summary})
		if err != nil {
			return err
		}
		told, err := tx.AttachmentTarget(ctx, c.ThreadID, c.Told())
		if errors.Is(err, thread.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, n := range c.Notices(told) {
			if err := outbox.Enqueue(ctx, tx, in.jobs, n.Outbox, n.Body); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("continue thread %s in %s: %w", c.ThreadID, platform, err)
	}
	return nil
}
