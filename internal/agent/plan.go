package agent

import (
	"encoding/json"
	"strings"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// recordedResponse is how an llm_call stitch stores the model's answer.
type recordedResponse struct {
	Content    string         `json:"content"`
	ToolCalls  []llm.ToolCall `json:"tool_calls,omitempty"`
	StopReason string         `json:"stop_reason,omitempty"`
}

func responseOf(s *thread.Stitch) recordedResponse {
	var r recordedResponse
	_ = json.Unmarshal(s.LLMResponse, &r) // a stitch weft did not write has no calls
	return r
}

// stepKind is what a turn does next.
type stepKind int

const (
	stepDone stepKind = iota
	stepCallLLM
	stepRunTools
	// stepDecide takes a person's reply ("Approve", "Deny: why") as the
	// decision on the request for approval the turn waits on.
	stepDecide
)

// plan is the next step, read off the chain.
type plan struct {
	kind stepKind
	// calls are the tool calls of the newest llm_call still without a result.
	calls []llm.ToolCall
	// stepsSinceInput counts llm_calls after the newest input, for the step limit.
	stepsSinceInput int
	// For stepDecide: the request for approval, the reply deciding it, and
	// what the reply decides.
	asked, reply *thread.Stitch
	decision     thread.Decision
	reason       string
}

// nextStep decides what the turn does next from the chain alone.
func nextStep(chain []thread.Stitch) plan {
	var (
		answered  int64
		lastInput int64
		lastCall  = -1
		steps     int
	)
	for i := range chain {
		s := &chain[i]
		if m := s.Meta(); m.AnsweredThrough > answered {
			answered = m.AnsweredThrough
		}
		switch {
		case s.Type.IsInput():
			lastInput, steps = s.Seq, 0
		case s.Type == thread.StitchLLMCall:
			lastCall = i
			steps++
		}
	}
	p := plan{stepsSinceInput: steps}

	if lastCall >= 0 {
		resolved := map[string]bool{}
		closed := false // the model's calls ended the turn: a question, or the result
		var sawResult bool
		states := callStates(chain[lastCall+1:])
		for _, s := range chain[lastCall+1:] {
			m := s.Meta()
			if id := m.ToolCallID; id != "" {
				resolved[id] = true
				sawResult = true
				if s.Type == thread.StitchClarificationRequest || s.Type == thread.StitchThreadResult {
					closed = true
				}
			}
			// A failure or a stop after the call: its tools never run. A
			// post the platform refused meanwhile is not the turn's failure.
			if (s.Type == thread.StitchError && m.OutboxID == "") || m.Stop {
				closed = true
			}
		}
		calls := responseOf(&chain[lastCall]).ToolCalls
		if !closed {
			for _, c := range calls {
				if !resolved[c.ID] {
					if st := states[c.ID]; st.asked != nil && st.decision == nil {
						// A call waits for a person's decision: so does
						// the turn, and any input that arrives meanwhile,
						// unless the input is the decision.
						p.calls = nil
						p.kind = stepDone
						for i := range chain[lastCall+1:] {
							s := &chain[lastCall+1+i]
							if !s.Type.IsInput() || s.Seq <= answered || s.Seq < st.asked.Seq || !s.DeletedAt.IsZero() {
								continue
							}
							if d, reason, ok := ParseDecision(s.Content); ok {
								p.kind, p.asked, p.reply, p.decision, p.reason = stepDecide, st.asked, s, d, reason
								break
							}
						}
						return p
					}
					p.calls = append(p.calls, c)
				}
			}
			if len(p.calls) > 0 {
				p.kind = stepRunTools
				return p
			}
			if len(calls) > 0 && sawResult {
				// The model asked for tools and has not seen their results yet.
				p.kind = stepCallLLM
				return p
			}
		}
	}
	if lastInput > answered {
		p.kind = stepCallLLM
	}
	return p
}

// Pending reports whether the chain has work for a turn: input not yet
// answered, or a step of an earlier turn left unfinished.
func Pending(chain []thread.Stitch) bool { return nextStep(chain).kind != stepDone }

// callState is what the chain records of one of the model's calls since the
// llm_call that made it, besides its result.
type callState struct {
	// intent: the call was about to be made (it has side effects).
	intent bool
	// asked is the call's approval request, decision the decision on it.
	asked, decision *thread.Stitch
}

// callStates reads the states of the calls in stitches (those after an
// llm_call), by call id.
func callStates(stitches []thread.Stitch) map[string]callState {
	out := map[string]callState{}
	for i := range stitches {
		s := &stitches[i]
		m := s.Meta()
		switch {
		case m.IntentOf != "":
			st := out[m.IntentOf]
			st.intent = true
			out[m.IntentOf] = st
		case s.Type == thread.StitchApprovalRequest && m.ApprovalFor != "":
			st := out[m.ApprovalFor]
			st.asked = s
			out[m.ApprovalFor] = st
		case s.Type == thread.StitchApprovalDecision && m.ApprovalFor != "":
			st := out[m.ApprovalFor]
			if st.decision == nil { // the first decision stands
				st.decision = s
			}
			out[m.ApprovalFor] = st
		}
	}
	return out
}

// ParseDecision reads a person's reply to a request for approval:
// "Approve" or "Deny" (or "approved", "denied"), in any case, optionally
// followed by a reason ("deny: wrong file"). An elicitation's select
// sends the option chosen as the reply's text.
func ParseDecision(text string) (thread.Decision, string, bool) {
	text = strings.TrimSpace(text)
	word, rest, _ := strings.Cut(text, " ")
	word = strings.ToLower(strings.TrimRight(word, ".:,!"))
	reason := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest), ":-–—,"))
	if i := strings.IndexAny(word, ":"); i > 0 {
		word = word[:i]
	}
	switch word {
	case "approve", "approved":
		return thread.Approve, reason, true
	case "deny", "denied":
		return thread.Deny, reason, true
	}
	return "", "", false
}
