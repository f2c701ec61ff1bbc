package partial

import (
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// Event is what a live view sends of a partial answer.
type Event struct {
	// End says the call's text is gone (its outcome recorded, or it
	// failed): a view drops what it showed. Otherwise Text replaces it.
	End bool
	// AfterSeq is the newest stitch the call answers.
	AfterSeq int64
	Text     string
}

// View decides what one live view (a console page, an API event stream)
// sends of a thread's partial answers, given the stitches it sent and the
// row it read after them. The zero View is ready.
type View struct {
	answered int64 // the newest outcome of a model call sent
	version  int64 // the version sent, 0 for none
	after    int64 // its AfterSeq
}

// Sent notes a stitch the view sent: an llm_call or an error is a model
// call's outcome, after which that call's partial text is void.
func (v *View) Sent(s *thread.Stitch) {
	if s.Type == thread.StitchLLMCall || s.Type == thread.StitchError {
		v.answered = max(v.answered, s.Seq)
	}
}

// Next is what to send now that the thread's partial row reads p (nil
// when there is none), and false when nothing changed.
func (v *View) Next(p *db.Partial) (Event, bool) {
	if p == nil || p.AfterSeq < v.answered {
		// No call streams, or the one that did has its outcome shown.
		if v.version == 0 {
			return Event{}, false
		}
		ev := Event{End: true, AfterSeq: v.after}
		v.version, v.after = 0, 0
		return ev, true
	}
	if p.Version == v.version && p.AfterSeq == v.after {
		return Event{}, false
	}
	v.version, v.after = p.Version, p.AfterSeq
	return Event{AfterSeq: p.AfterSeq, Text: p.Text}, true
}
