package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
)

// DefaultRetryWindow is how long a turn keeps retrying a model that is
// unavailable (rate limited, overloaded, failing) before the thread fails.
const DefaultRetryWindow = 10 * time.Minute

// BusyNotice is what each surface is told once when the model is
// unavailable and the turn will retry.
const BusyNotice = "The model is busy, retrying."

// Unavailable is the error a turn ends with when its model is unavailable
// for now: the caller should run the turn again after RetryAfter (a
// server's hint, or zero to choose its own backoff), holding no worker
// meanwhile, and not past Until, when the retry window closes and the next
// attempt fails the thread.
type Unavailable struct {
	Err        error
	RetryAfter time.Duration
	Until      time.Time
}

func (u *Unavailable) Error() string {
	return fmt.Sprintf("model unavailable until %s: %v", u.Until.Format(time.RFC3339), u.Err)
}

func (u *Unavailable) Unwrap() error { return u.Err }

// unavailable is callLLM's answer to a failure retrying may fix. Within the
// window it returns an *Unavailable, with the notice (a stitch that dates
// the outage, and a post) as the effects to record first when the outage is
// new; past it, the failure that ends the turn.
func (r *Runner) unavailable(th *thread.Thread, chain []thread.Stitch, err error) (thread.Effects, error) {
	window := r.RetryWindow
	if window <= 0 {
		window = DefaultRetryWindow
	}
	now := r.now()
	since, noted := busySince(chain)
	if noted && !now.Before(since.Add(window)) {
		return failure(th, chain, fmt.Sprintf("The language model stayed unavailable for %s (%s); the turn failed.",
			window, cause(err)), true), nil
	}
	var e thread.Effects
	if !noted {
		since = now
		e = thread.Effects{
			Stitches: []thread.Stitch{{Type: thread.StitchAgentThought, Content: BusyNotice,
				Metadata: thread.Meta{ModelBusySince: &since}.JSON()}},
			Outputs: []thread.Output{{Kind: thread.OutboxNotice, OutboxBody: thread.OutboxBody{Text: BusyNotice}}},
		}
	}
	return e, &Unavailable{Err: err, RetryAfter: retry.Hint(err), Until: since.Add(window)}
}

// busySince finds the notice of the outage the chain is in: one recorded
// after the last model call that answered and the last failure.
func busySince(chain []thread.Stitch) (time.Time, bool) {
	for i := len(chain) - 1; i >= 0; i-- {
		s := &chain[i]
		m := s.Meta()
		switch {
		case s.Type == thread.StitchLLMCall, s.Type == thread.StitchError && m.OutboxID == "":
			return time.Time{}, false
		case m.ModelBusySince != nil:
			return *m.ModelBusySince, true
		}
	}
	return time.Time{}, false
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// failedCall is the message a model call that retrying cannot fix leaves
// on the thread and its surface: what went wrong, in words that say what to
// do about it.
func failedCall(err error) string {
	var e *llm.Error
	if !errors.As(err, &e) {
		return "The language model could not be reached; the turn failed."
	}
	switch e.Kind {
	case llm.KindNotConfigured:
		return "No language model is configured (set WEFT_LLM_PROVIDER); the turn failed."
	case llm.KindAuth:
		return fmt.Sprintf("The language model refused weft's credentials (%s); check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY). The turn failed.", cause(err))
	case llm.KindContextTooLong:
		return "The conversation is too long for the model's context window; the turn failed. Start a new thread, or use a model with a larger context."
	case llm.KindBadRequest:
		return fmt.Sprintf("The language model rejected the request as invalid (%s); the turn failed.", cause(err))
	}
	return fmt.Sprintf("The language model could not be reached (%s); the turn failed.", cause(err))
}

// maxCause bounds the provider's words quoted in a failure message.
const maxCause = 300

// cause names a failed call's kind and status, and for a refused request the
// provider's own words, in one line.
func cause(err error) string {
	var e *llm.Error
	if !errors.As(err, &e) {
		return "unknown error"
	}
	s := e.Kind.String()
	if e.StatusCode != 0 {
		s += fmt.Sprintf(", HTTP %d", e.StatusCode)
	}
	if e.Kind == llm.KindBadRequest && e.Err != nil {
		s += ": " + clipTo(strings.Join(strings.Fields(e.Err.Error()), " "), maxCause)
	}
	return s
}

func clipTo(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
