package llm

// Delta is a piece of an answer's text, handed to Request.OnDelta as the
// model writes it. The deltas of one attempt concatenate to the text so
// far; a failed attempt that is retried makes its text void, so the first
// delta of a later attempt (a higher Attempt) starts the text over. Nothing
// is ever recorded from deltas: the call's [Response] is what counts.
type Delta struct {
	Text string
	// Attempt numbers the attempt this text belongs to, from 1.
	Attempt int
}

// deltaFunc returns the function an attempt reports its text through, or
// nil when the request has no consumer. next numbers the attempts.
func deltaFunc(req Request, next *int) func(string) {
	*next++
	if req.OnDelta == nil {
		return nil
	}
	attempt := *next
	return func(text string) {
		if text != "" {
			req.OnDelta(Delta{Text: text, Attempt: attempt})
		}
	}
}
