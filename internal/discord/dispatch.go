package discord

import (
	"context"
	"log/slog"
	"sync"
)

// maxPendingEvents bounds events waiting for the Sink. Past it, events are
// dropped with an error log rather than blocking the gateway; the backfill
// after the next reconnect finds dropped messages in the REST history.
const maxPendingEvents = 10_000

// dispatcher hands events to the Sink in gateway order per key (a channel or
// thread id) while different keys proceed in parallel.
//
// discordgo by default runs each handler in its own goroutine, so a message
// and its edit, or two quick messages, can reach the Sink out of order
// (discord.md §1.1). With SyncEvents they run in order on the gateway read
// loop instead, but a slow Sink would then stall the loop (and within Open,
// the session lock). So the handlers run synchronously and only enqueue here;
// one goroutine per busy key drains that key's queue and exits when it is
// empty. Order matters within a channel (create before update before
// delete), not across channels.
type dispatcher struct {
	logger *slog.Logger
	ctx    context.Context // parent of every Sink call; cancelled by stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	lanes   map[string][]func(context.Context)
	pending int
	closed  bool
}

// newDispatcher returns a running dispatcher.
func newDispatcher(logger *slog.Logger) *dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &dispatcher{logger: logger, ctx: ctx, cancel: cancel, lanes: make(map[string][]func(context.Context))}
}

// enqueue queues job behind earlier jobs of the same key. It never blocks.
func (d *dispatcher) enqueue(key string, job func(context.Context)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if d.pending >= maxPendingEvents {
		d.logger.Error("discord event dropped: sink backlog full", slog.String("channel_id", key))
		return
	}
	d.pending++
	queue, running := d.lanes[key]
	d.lanes[key] = append(queue, job)
	if !running {
		d.wg.Add(1)
		go d.drain(key)
	}
}

// drain runs a key's jobs until its queue is empty.
func (d *dispatcher) drain(key string) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		queue := d.lanes[key]
		if len(queue) == 0 {
			delete(d.lanes, key)
			d.mu.Unlock()
			return
		}
		job := queue[0]
		d.lanes[key] = queue[1:]
		d.mu.Unlock()

		job(d.ctx)

		d.mu.Lock()
		d.pending--
		d.mu.Unlock()
	}
}

// stop refuses new events and waits for queued ones; when ctx ends first it
// cancels the Sink calls in flight and waits for them to return.
func (d *dispatcher) stop(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	defer d.cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.cancel()
		<-done
		return ctx.Err()
	}
}
