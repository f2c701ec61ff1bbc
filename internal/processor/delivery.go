package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/logging"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// maxBackoff caps the doubling retry delays.
const maxBackoff = 10 * time.Minute

// maxWaitInLine caps how long a delivery waiting for an earlier post on its
// surface snoozes before it looks again; the earlier post's end wakes it
// at once (Processor.wake).
const maxWaitInLine = time.Minute

// backoff is the schedule of a job's retries, which River runs: first,
// doubled per attempt, capped, plus up to half again at random so that
// retries of many jobs after an outage spread out.
func backoff(first time.Duration) retry.Backoff {
	return retry.Backoff{Base: first, Max: maxBackoff, Jitter: 0.5}
}

type deliveryWorker struct {
	river.WorkerDefaults[job.Delivery]
	p *Processor
}

// Work sends one outbox row. A failure is retried with backoff and jitter;
// after the last attempt the row is failed and an error stitch recorded. A
// row already sent, or held by a live sender, is left alone.
func (w *deliveryWorker) Work(ctx context.Context, j *river.Job[job.Delivery]) error {
	p := w.p
	ctx = logging.With(ctx, slog.String("thread_id", j.Args.ThreadID.String()), slog.String("delivery_id", j.Args.OutboxID.String()))
	o, err := p.store.ClaimOutbox(ctx, j.Args.OutboxID, p.cfg.LeaseTTL)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return nil
	case errors.Is(err, thread.ErrDeliveryNotClaimable):
		// o is the row as it stands, unclaimed.
		if o.Status.Final() {
			return nil
		}
		// Not due yet, held by another sender, or waiting for an earlier
		// post on its surface (which wakes it when done): look again later,
		// the later the longer it has waited, so a row stuck behind a post
		// that keeps failing costs a look a minute, not one a second.
		wait := max(time.Until(o.NextAttemptAt), p.cfg.DeliveryBackoff, min(time.Since(o.CreatedAt)/2, maxWaitInLine))
		return river.JobSnooze(wait)
	case err != nil:
		return err
	}
	log := p.logger.With(slog.String("delivery_id", o.ID.String()), slog.String("thread_id", o.ThreadID.String()), slog.String("platform", string(o.Platform)))

	// The send gives up before its claim lapses, so the reclaim never hands
	// a row that is still being sent to a second sender.
	sendCtx, cancel := context.WithTimeout(ctx, p.cfg.LeaseTTL*3/4)
	ext, err := p.post(sendCtx, o)
	cancel()
	if err == nil {
		// Sent but not recorded: the retry sends the same id again,
		// which the platform answers as already delivered.
		return p.sent(ctx, p.store, o, ext)
	}

	if ctx.Err() != nil && p.cancelling.Load() {
		// This replica's shutdown cut the send short: the row goes to
		// another replica now, under the same id.
		if herr := p.handRowOver(context.WithoutCancel(ctx), p.store, o, err); herr != nil {
			return herr
		}
		return nil
	}
	// The row's attempts, not the job's, bound its sends: a row may have
	// several jobs (a wake, a sweep), each with attempts of its own.
	final := o.Attempts >= job.DeliveryMaxAttempts || errors.Is(err, thread.ErrInvalid)
	if !final {
		log.WarnContext(ctx, "delivery failed, will retry", slog.Int("attempt", o.Attempts), slog.Any("error", err))
		// A rate limit's reset, which the client no longer waits out
		// itself, is the least delay.
		delay := max(backoff(p.cfg.DeliveryBackoff).Delay(o.Attempts), retry.Hint(err))
		rerr := p.store.RetryOutbox(context.WithoutCancel(ctx), o, err.Error(), delay)
		if errors.Is(rerr, thread.ErrDeliveryNotClaimable) {
			// Our claim lapsed mid-send and another sender holds the row:
			// it is theirs to finish.
			return nil
		}
		if rerr != nil {
			return rerr
		}
		// The post waiting behind this one looks again now: an answer
		// drops this post, if it is only progress, rather than wait for
		// its retries.
		p.wakeNext(ctx, log, o)
		return err
	}
	log.ErrorContext(ctx, "delivery failed for good", slog.Int("attempt", o.Attempts), slog.Any("error", err))
	p.cfg.Metrics.GaveUp(string(o.Platform))
	ferr := p.failDelivery(context.WithoutCancel(ctx), o, err)
	if errors.Is(ferr, thread.ErrDeliveryNotClaimable) {
		return nil // as for a retry: another sender holds the row now
	}
	if ferr != nil {
		return ferr
	}
	p.wakeNext(ctx, log, o)
	return river.JobCancel(err)
}

// wakeNext wakes the post that waits in line behind o, if any.
func (p *Processor) wakeNext(ctx context.Context, log *slog.Logger, o *thread.Outbox) {
	next, err := p.store.NextInLine(context.WithoutCancel(ctx), o)
	if err != nil && !errors.Is(err, thread.ErrNotFound) {
		// The next post's own job or the sweeper still sends it.
		log.WarnContext(ctx, "next delivery in line", slog.Any("error", err))
	}
	p.wake(ctx, o, next)
}

// handRowOver releases o's claim through store, for it to be sent again at once, with a
// delivery job for it (see handOver); a row no longer under that claim is
// left to whoever holds it.
func (p *Processor) handRowOver(ctx context.Context, store *db.Store, o *thread.Outbox, cause error) error {
	_, err := p.handOver(ctx, store, func(ctx context.Context, tx *db.Tx) ([]thread.Outbox, error) {
		switch rerr := tx.RetryOutbox(ctx, o, cause.Error(), 0); {
		case errors.Is(rerr, thread.ErrDeliveryNotClaimable):
			return nil, nil
		case rerr != nil:
			return nil, rerr
		}
		return []thread.Outbox{*o}, nil
	})
	return err
}

// post sends a claimed row through its platform's sender and returns the
// platform's id for it.
func (p *Processor) post(ctx context.Context, o *thread.Outbox) (string, error) {
	sender, ok := p.senders[o.Platform]
	if !ok {
		return "", fmt.Errorf("%w: no sender configured for %s", thread.ErrInvalid, o.Platform)
	}
	ctx, span := tracing.Child(ctx, p.tracer, "post "+string(o.Platform)+" "+string(o.Kind), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("weft.delivery_id", o.ID.String()), attribute.Int("weft.attempt", o.Attempts)))
	defer span.End()
	start := time.Now()
	// The row's attempts are the one retry budget of a post: a client
	// below that retried inside each would multiply them (a platform's 500
	// was sent 3 times per attempt).
	ext, err := sender.Send(retry.Once(ctx), *o)
	p.cfg.Metrics.Send(string(o.Platform), metrics.Outcome(ctx, err), time.Since(start))
	tracing.End(span, err)
	return ext, err
}

// sent records through store that o went out, and wakes the post that
// waited in line behind it.
func (p *Processor) sent(ctx context.Context, store *db.Store, o *thread.Outbox, externalID string) error {
	next, err := store.MarkOutboxSent(context.WithoutCancel(ctx), o.ID, externalID)
	if err != nil {
		return err
	}
	p.logger.InfoContext(ctx, "delivered", slog.String("delivery_id", o.ID.String()), slog.String("thread_id", o.ThreadID.String()),
		slog.String("platform", string(o.Platform)), slog.String("kind", string(o.Kind)), slog.Int("attempt", o.Attempts))
	p.wake(ctx, o, next)
	return nil
}

// wake enqueues next (when set), the post that waited in line behind o, so
// it goes out now rather than when its snooze ends. Its own job finds it
// sent, later.
func (p *Processor) wake(ctx context.Context, o *thread.Outbox, next uuid.UUID) {
	if next == uuid.Nil {
		return
	}
	if _, err := p.client.Insert(context.WithoutCancel(ctx), job.Delivery{OutboxID: next, ThreadID: o.ThreadID}, nil); err != nil {
		// The next post's own job or the sweeper still sends it.
		p.logger.WarnContext(ctx, "wake next delivery", slog.String("delivery_id", o.ID.String()), slog.Any("error", err))
	}
}

// Timeout leaves room for a send (three quarters of LeaseTTL) and its
// bookkeeping, whatever LeaseTTL is configured.
func (w *deliveryWorker) Timeout(*river.Job[job.Delivery]) time.Duration { return w.p.cfg.LeaseTTL }

// NextRetry schedules the next attempt: the row's own next_attempt_at plus
// jitter, so retries of many rows after an outage spread out. Never before
// it: the outbox row is due at now plus the delay.
func (w *deliveryWorker) NextRetry(j *river.Job[job.Delivery]) time.Time {
	return time.Now().Add(backoff(w.p.cfg.DeliveryBackoff).Jittered(j.Attempt))
}

// refusedAnswer is what the user reads when the platform refused weft's
// answer for good.
const refusedAnswer = "Sorry, my answer could not be posted here, so this conversation has stopped. " +
	"Please try again; if it keeps failing, an operator can see why in weft's console."

// failDelivery gives up on a row: it is failed and the thread gets an error
// stitch saying what could not be posted. A thread left waiting on an
// answer that could not be posted (a response, a question) fails, with the
// error posted once more as an error (a platform may take that kind when
// it refused the other), so it does not rest silently waiting. A refused
// error post, or echo, is not posted again.
func (p *Processor) failDelivery(ctx context.Context, o *thread.Outbox, cause error) error {
	return p.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.LockThread(ctx, o.ThreadID)
		if err != nil {
			return err
		}
		if err := tx.FailOutbox(ctx, o, cause.Error()); err != nil {
			return err
		}
		msg := fmt.Sprintf("Could not post a %s to %s: %v", o.Kind, o.Platform, cause)
		e := thread.Effects{Stitches: []thread.Stitch{{Type: thread.StitchError, Content: msg, Metadata: thread.Meta{OutboxID: o.ID.String()}.JSON()}}}
		// An echo refused is only a note: the answer itself went out where
		// the question was asked.
		body, _ := o.Content() // a body that does not decode is no echo
		answer := (o.Kind == thread.OutboxResponse || o.Kind == thread.OutboxElicitation) && !body.Echo
		if answer && th.Status == thread.StatusWaiting {
			e.Stitches[0].Metadata = thread.Meta{OutboxID: o.ID.String(), AnsweredThrough: th.StitchCount}.JSON()
			// The platform's words are for operators (the stitch, the
			// thread's error); the user reads what happened.
			e.Outputs = []thread.Output{{Kind: thread.OutboxError, OutboxBody: thread.OutboxBody{Text: refusedAnswer}}}
			e.Status = &thread.StatusChange{To: thread.StatusFailed, Error: msg}
		}
		_, err = outbox.Write(ctx, tx, p.client, o.ThreadID, e)
		return err
	})
}
