package processor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// expressTimeout bounds one express send: Linear's answer to an activity
// normally takes well under a second.
const expressTimeout = 5 * time.Second

// Express sends outbox rows the moment the transaction that wrote them has
// committed, outside River: how a new Linear session's acknowledgement
// reaches Linear in milliseconds whatever backlog the delivery queue has.
// The rows are written already claimed for a while (db.Write.SendingFor),
// so an express send takes no claim of its own, and each row's delivery job
// is enqueued with it to run when that claim lapses (job.Delivery.NotBefore):
// it finds the row sent, or sends it when express could not (all its slots
// busy, the send failed, or the process died). A send slower than the claim
// may be sent by the job too, under the same id, which the platform takes
// as delivered.
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
// once. With limit sends in flight already it does nothing: the row's job
// sends it once the claim lapses.
func (e *Express) Send(o thread.Outbox) {
	select {
	case e.slots <- struct{}{}:
	default:
		return
	}
	e.wg.Go(func() {
		defer func() { <-e.slots }()
		ctx, cancel := context.WithTimeout(context.Background(), expressTimeout)
		defer cancel()
		e.send(ctx, &o)
	})
}

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
	// Released to the job at once rather than when the claim lapses. A
	// send that went out but was not recorded is sent again under the
	// same id, which the platform takes as delivered.
	log := e.p.logger.With(slog.String("delivery_id", o.ID.String()), slog.Bool("express", true))
	log.WarnContext(ctx, "express send failed; the delivery job will retry", slog.Any("error", err))
	if rerr := e.store.RetryOutbox(context.WithoutCancel(ctx), o.ID, err.Error(), time.Now()); rerr != nil {
		log.WarnContext(ctx, "release express claim", slog.Any("error", rerr))
	}
}
