package processor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// expressClaim is how long a row written for express stays claimed by it
// (db.Write.SendingFor, see Express.Claim): short, so that an acknowledgement express never
// sent (all its slots busy, or the process died) reaches its platform
// through the leader's reclaim well within the platform's deadline (10 s
// for the strictest).
const expressClaim = 2 * time.Second

// expressTimeout bounds one express send well inside its claim, which
// started with the write's transaction: the reclaim hands a row whose
// claim lapsed to a delivery job, which must not find this send still in
// flight (a send of 5 s under a 2 s claim was made twice at once).
// A platform's answer to a post normally takes well under a second; a
// send cut short goes to a delivery job at once, under the same id.
const expressTimeout = expressClaim / 2

// Express sends outbox rows the moment the transaction that wrote them has
// committed, outside River: how a new conversation's acknowledgement
// reaches its platform in milliseconds whatever backlog the delivery queue has.
// The rows are written already claimed for expressClaim (db.Write.SendingFor),
// so an express send takes no claim of its own, and without a delivery job:
// a send that fails hands its row to one at once, and a row express never
// sent (all its slots busy, or the process died) is handed to one by the
// leader's reclaim (job.Reclaim) when its claim lapses. Recovery so costs
// in proportion to failures, not to traffic. A send ends before its claim
// does (expressTimeout), so the job never sends while it is in flight.
type Express struct {
	p     *Processor
	store *db.Store
	slots chan struct{}
	wg    sync.WaitGroup
}

// Express returns an Express that records rows through store, with at
// most limit sends in flight.
func (p *Processor) Express(store *db.Store, limit int) *Express {
	return &Express{p: p, store: store, slots: make(chan struct{}, limit)}
}

// Send starts sending o, a row written claimed for express, and returns at
// once. With limit sends in flight already it does nothing: the reclaim
// hands the row to a delivery job once the claim lapses. The send keeps
// ctx's values (its trace), not its deadline.
func (e *Express) Send(ctx context.Context, o thread.Outbox) {
	select {
	case e.slots <- struct{}{}:
	default:
		return
	}
	e.wg.Go(func() {
		defer func() { <-e.slots }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), expressTimeout)
		defer cancel()
		e.send(ctx, &o)
	})
}

// Claim is how long a row written for express must be claimed for: longer
// than any one express send.
func (e *Express) Claim() time.Duration { return expressClaim }

// Wait returns when the sends in flight have ended.
func (e *Express) Wait() { e.wg.Wait() }

func (e *Express) send(ctx context.Context, o *thread.Outbox) {
	ext, err := e.p.post(ctx, o)
	if err == nil {
		err = e.p.sent(ctx, e.store, o, ext)
	}
	if err == nil {
		return
	}
	// Handed to a delivery job at once rather than when the claim lapses.
	// A send that went out but was not recorded is sent again under the
	// same id, which the platform takes as delivered.
	log := e.p.logger.With(slog.String("delivery_id", o.ID.String()), slog.Bool("express", true))
	log.WarnContext(ctx, "express send failed; a delivery job will retry", slog.Any("error", err))
	// A row sent meanwhile, or reclaimed after its claim lapsed, is left
	// to whoever holds it.
	if herr := e.p.handRowOver(context.WithoutCancel(ctx), e.store, o, err); herr != nil {
		// The claim lapses and the reclaim hands the row over then.
		log.WarnContext(ctx, "hand express row to a delivery job", slog.Any("error", herr))
	}
}
