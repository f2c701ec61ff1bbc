package processor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// heartbeat is the replica's heartbeat for all its running turns: every
// Heartbeat it looks for aborts and lost leases, and renews each lease
// every third of its TTL (or on the next beat, when a step's write held it
// locked), in one round trip for all the turns. A statement per turn cost a
// replica with 1,000 turns waiting on a slow model 1,000 round trips a
// second, which queued every step's writes behind them on the work pool.
// Its loop runs while turns are in it.
type heartbeat struct {
	p *Processor

	mu    sync.Mutex
	turns map[db.TurnLease]*beat
	// idle stops the loop, closed when the last turn leaves; nil while
	// no loop runs.
	idle chan struct{}
}

// beat is one turn in the heartbeat.
type beat struct {
	cancel  context.CancelCauseFunc
	renewed time.Time
	// renewing is closed once the renewal that includes the turn has
	// ended; nil before its first.
	renewing chan struct{}
}

// join puts a turn that has just taken its thread's lease in the
// heartbeat, which cancels the turn (cancel) when the thread is aborted or
// the lease lost. The turn leaves with the func it returns, which waits
// for a renewal of its lease in flight: once it returns, the heartbeat no
// longer touches the lease, which the turn may then release or keep longer.
func (h *heartbeat) join(id uuid.UUID, owner string, cancel context.CancelCauseFunc) (leave func()) {
	l := db.TurnLease{ThreadID: id, Owner: owner}
	h.mu.Lock()
	h.turns[l] = &beat{cancel: cancel, renewed: time.Now()}
	if h.idle == nil {
		h.idle = make(chan struct{})
		go h.loop(h.idle)
	}
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			var renewing chan struct{}
			if b := h.turns[l]; b != nil {
				renewing = b.renewing
				h.remove(l)
			}
			h.mu.Unlock()
			if renewing != nil {
				<-renewing
			}
		})
	}
}

// remove takes a turn out, stopping the loop when it was the last; the
// caller holds mu.
func (h *heartbeat) remove(l db.TurnLease) {
	delete(h.turns, l)
	if len(h.turns) == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// loop beats every Heartbeat until idle is closed.
func (h *heartbeat) loop(idle <-chan struct{}) {
	t := time.NewTicker(h.p.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-idle:
			return
		case <-t.C:
			h.beat()
		}
	}
}

// beat looks at every turn in the heartbeat, renewing the leases due, and
// cancels the turns whose thread was aborted or whose lease was lost.
func (h *heartbeat) beat() {
	now := time.Now()
	renewed := make(chan struct{})
	defer close(renewed)
	var turns, renew []db.TurnLease
	beats := map[db.TurnLease]*beat{}
	h.mu.Lock()
	for l, b := range h.turns {
		beats[l] = b
		turns = append(turns, l)
		if now.Sub(b.renewed) >= h.p.cfg.LeaseTTL/3 {
			b.renewing = renewed
			renew = append(renew, l)
		}
	}
	h.mu.Unlock()
	if len(turns) == 0 {
		return
	}

	// Bounded well inside the TTL: a renewal that cannot be made in time
	// is retried on the next beat.
	ctx, cancel := context.WithTimeout(context.Background(), h.p.cfg.LeaseTTL/3)
	defer cancel()
	held, renewedNow, err := h.p.store.Heartbeat(ctx, turns, renew, h.p.cfg.LeaseTTL)
	if err != nil {
		h.p.logger.WarnContext(ctx, "turn heartbeat", slog.Int("turns", len(turns)), slog.Any("error", err))
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for l, b := range beats {
		if h.turns[l] != b {
			continue // the turn left meanwhile (and its job may have run again)
		}
		if renewedNow[l] {
			b.renewed = now
		}
		switch status, ok := held[l]; {
		case !ok:
			b.cancel(errLeaseLost)
		case status == thread.StatusAborted:
			b.cancel(thread.ErrAborted)
		default:
			continue
		}
		h.remove(l) // cancelled: nothing more to look for
	}
}
