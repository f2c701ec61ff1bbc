package processor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// expressTimeout bounds one express send: Linear's answer to an activity
// normally takes well under a second.
const expressTimeout = 5 * time.Second

// Express sends outbox rows the moment the transaction that wrote them has
// committed, outside River: how a new Linear session's acknowledgement
// reaches Linear in milliseconds whatever backlog the delivery queue has.
// Each row's delivery job is enqueued with it to run a little later (see
// job.Delivery.NotBefore), and finds the row sent; when the express send
// could not go (all its slots busy, the send failed, or the process died),
// the job sends it.
type Express struct {
	p     *Processor
	store *db.Store
	slots chan struct{}
	wg    sync.WaitGroup
}

// Express returns an Express that claims and records rows through store,
// with at most limit sends in flight.
func (p *Processor) Express(store *db.Store, limit int) *Express {
	return &Express{p: p, store: store, slots: make(chan struct{}, limit)}
}

// Send starts sending the row with id and returns at once. With limit
// sends in flight already it does nothing: the row's job sends it.
func (e *Express) Send(id uuid.UUID) {
	select {
	case e.slots <- struct{}{}:
	default:
		return
	}
	e.wg.Go(func() {
		defer func() { <-e.slots }()
		ctx, cancel := context.WithTimeout(context.Background(), expressTimeout)
		defer cancel()
		e.send(ctx, id)
	})
}

// Wait returns when the sends in flight have ended.
func (e *Express) Wait() { e.wg.Wait() }

func (e *Express) send(ctx context.Context, id uuid.UUID) {
	log := e.p.logger.With(slog.String("delivery_id", id.String()), slog.Bool("express", true))
	o, err := e.store.ClaimOutbox(ctx, id, e.p.cfg.LeaseTTL)
	if errors.Is(err, thread.ErrDeliveryNotClaimable) || errors.Is(err, thread.ErrNotFound) {
		return // sent, or in the job's hands
	}
	if err != nil {
		log.WarnContext(ctx, "express claim", slog.Any("error", err))
		return
	}
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
	log.WarnContext(ctx, "express send failed; the delivery job will retry", slog.Any("error", err))
	if rerr := e.store.RetryOutbox(context.WithoutCancel(ctx), o.ID, err.Error(), time.Now()); rerr != nil {
		log.WarnContext(ctx, "release express claim", slog.Any("error", rerr))
	}
}
