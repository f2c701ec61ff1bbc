package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
)

// Continue attaches a thread to a new Discord or Slack thread, in one
// transaction with what announces it: the summary posted there, and, when
// the thread has a Linear session, c.LinearText as a response activity
// there and c.URL as the session's external link. From then on the
// thread's answers go wherever its latest input came from. A thread
// attached on that platform already fails with thread.ErrAlreadyAttached.
func (in *Ingester) Continue(ctx context.Context, c thread.Continuation) error {
	platform, target, err := c.Surface()
	if err != nil {
		return fmt.Errorf("continue thread %s: %w", c.ThreadID, err)
	}
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		var err error
		if c.Discord != nil {
			err = tx.AttachDiscord(ctx, *c.Discord)
		} else {
			err = tx.AttachSlack(ctx, *c.Slack)
		}
		if err != nil {
			return err
		}
		err = outbox.Enqueue(ctx, tx, in.jobs, thread.Outbox{ThreadID: c.ThreadID, Platform: platform,
			Target: target, Kind: thread.OutboxMessage}, thread.OutboxBody{Text: c.Summary})
		if err != nil {
			return err
		}
		lin, err := tx.LinearAttachment(ctx, c.ThreadID)
		if errors.Is(err, thread.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		err = outbox.Enqueue(ctx, tx, in.jobs, thread.Outbox{ThreadID: c.ThreadID, Platform: thread.PlatformLinear,
			Target: lin.SessionID, Kind: thread.OutboxResponse}, thread.OutboxBody{Text: c.LinearText})
		if err != nil {
			return err
		}
		return outbox.Enqueue(ctx, tx, in.jobs, thread.Outbox{ThreadID: c.ThreadID, Platform: thread.PlatformLinear,
			Target: lin.SessionID, Kind: thread.OutboxSessionUpdate},
			thread.OutboxBody{ExternalURL: c.URL, ExternalURLLabel: c.URLLabel})
	})
	if err != nil {
		return fmt.Errorf("continue thread %s in %s: %w", c.ThreadID, platform, err)
	}
	return nil
}
