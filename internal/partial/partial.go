// Package partial keeps the answer a model is writing where the console and
// the API's event stream can show it, on whichever replica serves them: it
// implements agent.Partials by writing a streaming call's text so far to
// the database (db.SetPartial, which NOTIFYs the thread's watchers),
// throttled to one write per Interval however fast the model writes.
package partial

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/throttle"
)

// DefaultInterval is the least time between two writes of one call's text:
// often enough to read as a stream, rare enough that a model writing a
// hundred tokens a second costs four writes and NOTIFYs a second.
const DefaultInterval = 250 * time.Millisecond

// clearTimeout bounds the delete of a call's row when it ends.
const clearTimeout = 5 * time.Second

// Store is where partial text goes. *db.Store implements it.
type Store interface {
	SetPartial(ctx context.Context, threadID uuid.UUID, afterSeq int64, text string) (bool, error)
	ClearPartial(ctx context.Context, threadID uuid.UUID, afterSeq int64) error
}

// Deps is what a Writer needs.
type Deps struct {
	Store  Store
	Logger *slog.Logger
	// Interval is the least time between two writes of a call's text; 0
	// means DefaultInterval.
	Interval time.Duration
}

// Writer is an agent.Partials that writes to Store.
type Writer struct{ d Deps }

var _ agent.Partials = (*Writer)(nil)

// New returns a Writer.
func New(d Deps) *Writer {
	if d.Interval <= 0 {
		d.Interval = DefaultInterval
	}
	return &Writer{d: d}
}

// Open implements agent.Partials.
func (w *Writer) Open(ctx context.Context, th *thread.Thread, after int64) agent.PartialAnswer {
	a := &answer{w: w, ctx: ctx, threadID: th.ID, after: after}
	a.Latest = throttle.New(a.run)
	return a
}

// answer is one call's partial text. A goroutine, started by the first
// Text, writes the newest text at most once per Interval.
type answer struct {
	*throttle.Latest
	w        *Writer
	ctx      context.Context
	threadID uuid.UUID
	after    int64

	mu     sync.Mutex
	wrote  bool // a row may exist: Close deletes it
	failed bool // a write failed: logged once
}

// Close implements agent.PartialAnswer: it stops the writes and deletes
// the row, the call's outcome being recorded by now.
func (a *answer) Close() {
	a.Latest.Close()
	a.mu.Lock()
	wrote := a.wrote
	a.mu.Unlock()
	if !wrote {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), clearTimeout)
	defer cancel()
	if err := a.w.d.Store.ClearPartial(ctx, a.threadID, a.after); err != nil {
		a.w.d.Logger.WarnContext(ctx, "partial: clear", slog.String("thread_id", a.threadID.String()), slog.Any("error", err))
	}
}

func (a *answer) run() {
	for a.Wait() {
		a.write()
		if !a.Pause(a.w.d.Interval) {
			return
		}
	}
}

// write writes the newest text, if it changed since the last write.
func (a *answer) write() {
	text, dirty := a.Take()
	if !dirty {
		return
	}
	wrote, err := a.w.d.Store.SetPartial(a.ctx, a.threadID, a.after, text)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.wrote = a.wrote || wrote
	if err != nil && !a.failed && a.ctx.Err() == nil {
		// Partial text is a courtesy: the answer is posted all the same.
		a.failed = true
		a.w.d.Logger.WarnContext(a.ctx, "partial: write", slog.String("thread_id", a.threadID.String()), slog.Any("error", err))
	}
}
