package agent

import (
	"context"
	"strings"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// Partials receives the text of a turn's model calls as the model writes
// it, for surfaces that show an answer while it grows. Nothing is recorded
// from it: the llm_call stitch, written when the call has finished, is the
// answer. Set on a [Runner], it makes model calls stream.
type Partials interface {
	// Open starts the partial answer of one model call on th. after is the
	// seq of the newest stitch the call answers: the stitches that record
	// the call's outcome come after it.
	Open(ctx context.Context, th *thread.Thread, after int64) PartialAnswer
}

// PartialAnswer is one model call's answer as it streams.
type PartialAnswer interface {
	// Text is the whole answer so far. It grows, or starts over (shorter)
	// when an attempt cut midway was retried. It is called on the turn's
	// goroutine while the model streams, so it must not block.
	Text(text string)
	// Close ends the call's partial answer, once its outcome is recorded
	// (or the call failed and nothing will be).
	Close()
}

// partial forwards a model call's deltas to a PartialAnswer as the whole
// text so far. The zero of its pointer (no Partials) does nothing.
type partial struct {
	to      PartialAnswer
	text    strings.Builder
	attempt int
}

// openPartial opens the partial answer of the next model call, or returns
// nil when the runner has no Partials.
func (r *Runner) openPartial(ctx context.Context, th *thread.Thread, chain []thread.Stitch) *partial {
	if r.Partials == nil {
		return nil
	}
	return &partial{to: r.Partials.Open(ctx, th, chain[len(chain)-1].Seq)}
}

// onDelta is the request's OnDelta: nil when nothing listens, so the call
// does not stream for nobody.
func (p *partial) onDelta() func(llm.Delta) {
	if p == nil {
		return nil
	}
	return func(d llm.Delta) {
		if d.Attempt != p.attempt {
			// A retried attempt's text replaces the failed one's.
			p.text.Reset()
			p.attempt = d.Attempt
		}
		p.text.WriteString(d.Text)
		p.to.Text(p.text.String())
	}
}

func (p *partial) close() {
	if p != nil {
		p.to.Close()
	}
}
