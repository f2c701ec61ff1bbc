package llm

import "strings"

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

// midStream refines the kind of a failure that arrived inside a stream whose
// status was 200: an error event (Anthropic's overloaded_error, OpenAI's
// server_error) is the provider failing, which classify, seeing only the
// 200, took for a malformed reply. Both kinds are retried; the kind is what
// logs and metrics say.
func midStream(e *Error) *Error {
	if e.Kind != KindMalformed || e.Err == nil {
		return e
	}
	msg := e.Err.Error()
	switch {
	case strings.Contains(msg, "rate_limit"):
		e.Kind = KindRateLimited
	case strings.Contains(msg, "overloaded_error"), strings.Contains(msg, "api_error"), strings.Contains(msg, "server_error"):
		e.Kind = KindServer
	}
	return e
}
