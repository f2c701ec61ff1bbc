package processor

import "github.com/google/uuid"

// Observer is told when a turn job starts and when it returns, on the
// worker's goroutine: `weft bench turns` times pickup latency (enqueue
// commit to start) and the backend's share of a turn with it. Its methods
// must return at once; a nil Observer costs nothing.
type Observer interface {
	// TurnStarted is called as a turn job starts, before anything else.
	TurnStarted(threadID uuid.UUID, jobID int64)
	// TurnFinished is called as it returns, after its lease is released,
	// with the error River will see.
	TurnFinished(threadID uuid.UUID, jobID int64, err error)
}

// observeTurn reports the turn's start at once and returns what reports
// its end, for a defer.
func (p *Processor) observeTurn(threadID uuid.UUID, jobID int64) func(err error) {
	o := p.cfg.Observer
	if o == nil {
		return func(error) {}
	}
	o.TurnStarted(threadID, jobID)
	return func(err error) { o.TurnFinished(threadID, jobID, err) }
}
