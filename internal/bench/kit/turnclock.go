package kit

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/processor"
)

// TurnClock times turns from outside the processor: as its
// processor.Observer it sees each turn start and finish, and as a wrapper
// of the llm.Provider it sees each model call start and end. A turn's
// backend overhead is its time minus its model calls. Calls are matched to
// turns by the conversation's first user message, which the bench makes
// unique per thread (Key).
type TurnClock struct {
	llm.Provider

	mu       sync.Mutex
	turns    map[uuid.UUID]*turnSpan
	calls    map[string][]span
	finished int
	nudge    chan struct{} // a finish happened; capacity 1
}

var _ processor.Observer = (*TurnClock)(nil)

type span struct{ start, end time.Time }

type turnSpan struct {
	start, end time.Time
	attempts   int
	err        error
}

// NewTurnClock wraps the model provider p, which may instead be set as
// Provider before the first call (how a bench wraps the one app.New makes).
func NewTurnClock(p llm.Provider) *TurnClock {
	return &TurnClock{Provider: p, turns: map[uuid.UUID]*turnSpan{}, calls: map[string][]span{}, nudge: make(chan struct{}, 1)}
}

// TurnStarted implements processor.Observer.
func (c *TurnClock) TurnStarted(threadID uuid.UUID, _ int64) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.turns[threadID]
	if t == nil {
		t = &turnSpan{start: now}
		c.turns[threadID] = t
	}
	t.attempts++
}

// TurnFinished implements processor.Observer.
func (c *TurnClock) TurnFinished(threadID uuid.UUID, _ int64, err error) {
	now := time.Now()
	c.mu.Lock()
	t := c.turns[threadID]
	if t != nil {
		if t.end.IsZero() {
			c.finished++
		}
		t.end, t.err = now, err
	}
	c.mu.Unlock()
	select {
	case c.nudge <- struct{}{}:
	default:
	}
}

// Complete implements llm.Provider, timing the wrapped call.
func (c *TurnClock) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := c.Provider.Complete(ctx, req)
	end := time.Now()
	if key := Key(req); key != "" {
		c.mu.Lock()
		c.calls[key] = append(c.calls[key], span{start, end})
		c.mu.Unlock()
	}
	return resp, err
}

// Key is what identifies a thread in a model request: its first user
// message.
func Key(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			return m.Content
		}
	}
	return ""
}

// Finished is how many turns have finished so far.
func (c *TurnClock) Finished() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished
}

// WaitFinished waits until n turns have finished, or ctx ends.
func (c *TurnClock) WaitFinished(ctx context.Context, n int) error {
	for c.Finished() < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.nudge:
		}
	}
	return nil
}

// Reset forgets everything recorded, between runs.
func (c *TurnClock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns, c.calls, c.finished = map[uuid.UUID]*turnSpan{}, map[string][]span{}, 0
}

// Turn is a thread the bench enqueued: its id, its key (first user
// message) and when the enqueue's transaction had committed.
type Turn struct {
	ThreadID  uuid.UUID
	Key       string
	Committed time.Time
}

// TurnReport is what the clock saw of a set of turns.
type TurnReport struct {
	// Pickup is, per turn, enqueue commit to turn start.
	Pickup Latencies
	// StepOverhead is, per model call, the backend time attributed to its
	// step: from the previous call's end (or the turn's start) to this
	// call's start, plus, for the turn's last call, from its end to the
	// turn's end. Their sum is the turn's time less its model calls.
	StepOverhead Latencies
	// LLM is, per model call, the time inside the provider.
	LLM Latencies
	// First and Last bound the turns: the first start and the last finish.
	First, Last time.Time
	// Unfinished counts turns never seen to finish; Failed, turns that
	// finished with an error; Retried, turns started more than once.
	Unfinished, Failed, Retried int
}

// Report joins what the clock recorded with the turns the bench enqueued.
func (c *TurnClock) Report(turns []Turn) TurnReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r TurnReport
	for _, tr := range turns {
		t := c.turns[tr.ThreadID]
		if t == nil || t.end.IsZero() {
			r.Unfinished++
			continue
		}
		if t.err != nil {
			r.Failed++
		}
		if t.attempts > 1 {
			r.Retried++
		}
		if r.First.IsZero() || t.start.Before(r.First) {
			r.First = t.start
		}
		if t.end.After(r.Last) {
			r.Last = t.end
		}
		// A turn may start before the enqueuer sees its commit return
		// (the notification races the commit's reply): that is no wait.
		r.Pickup = append(r.Pickup, max(0, t.start.Sub(tr.Committed)))
		prev := t.start
		calls := c.calls[tr.Key]
		for i, s := range calls {
			step := s.start.Sub(prev)
			if i == len(calls)-1 {
				step += t.end.Sub(s.end)
			}
			r.StepOverhead = append(r.StepOverhead, step)
			r.LLM = append(r.LLM, s.end.Sub(s.start))
			prev = s.end
		}
	}
	r.Pickup, r.StepOverhead, r.LLM = r.Pickup.Sorted(), r.StepOverhead.Sorted(), r.LLM.Sorted()
	return r
}
