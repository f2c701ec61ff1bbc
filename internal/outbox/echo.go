package outbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/thread"
)

// Echo says what the surfaces a thread is attached to hear of the
// conversation while it goes on on another one: a policy per platform, and
// how long the conversation must be quiet before a summary is posted.
type Echo struct {
	Policies map[thread.Platform]thread.EchoPolicy
	Idle     time.Duration
}

// DefaultEcho is weft's default: each platform's default policy
// (thread.DefaultEchoPolicies), summaries after ten idle minutes.
func DefaultEcho() Echo {
	return Echo{Idle: 10 * time.Minute, Policies: thread.DefaultEchoPolicies()}
}

// policy is p's policy; a platform without one hears nothing.
func (x Echo) policy(p thread.Platform) thread.EchoPolicy {
	if v, ok := x.Policies[p]; ok {
		return v
	}
	return thread.EchoNone
}

// Mirror is what a step's answer brings the thread's other surfaces: the
// echo rows for w (a step planned by Plan, its stitches with ids), and the
// summary jobs, due once the conversation has been idle. surface is where
// the input came from (nil: no platform), attached the thread's live
// attachments, chain the chain before the step, and through its length
// once the step is written. A step without an answer brings nothing.
func (x Echo) Mirror(surface *Surface, attached []Surface, chain []thread.Stitch, w db.Write, e thread.Effects, through int64) ([]thread.Outbox, []river.InsertManyParams) {
	answer, stitchID := answerOf(e, w.Stitches)
	if answer.Text == "" {
		return nil, nil
	}
	from := askedIn(chain, surface)
	var rows []thread.Outbox
	var jobs []river.InsertManyParams
	for _, s := range attached {
		if surface != nil && s == *surface {
			continue
		}
		var text string
		switch x.policy(s.Platform) {
		case thread.EchoEverything:
			text = exchange(from, questions(chain, s.Platform), answer)
		case thread.EchoAnswers:
			text = fmt.Sprintf("In %s, weft %s:\n\n%s", placeName(from), verb(answer.Kind), answer.Text)
		case thread.EchoSummary:
			jobs = append(jobs, river.InsertManyParams{
				Args:       job.EchoSummary{ThreadID: w.ThreadID, Platform: string(s.Platform), Target: s.Target, After: through},
				InsertOpts: &river.InsertOpts{ScheduledAt: time.Now().Add(x.Idle)},
			})
			continue
		default:
			continue
		}
		rows = append(rows, thread.Outbox{ThreadID: w.ThreadID, StitchID: stitchID, Platform: s.Platform, Target: s.Target,
			Kind: thread.OutboxResponse, Body: thread.OutboxBody{Text: text, Echo: true}.JSON()})
	}
	return rows, jobs
}

// askedIn is the platform the newest input came from: surface's, or, when
// the answer goes nowhere (an archived chat thread), the input's own.
func askedIn(chain []thread.Stitch, surface *Surface) thread.Platform {
	if surface != nil {
		return surface.Platform
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Type.IsInput() {
			return chain[i].Source
		}
	}
	return ""
}

// answerOf is a step's answer (a response, or a question back) and the
// stitch it comes from; its Text is "" when the step answers nothing.
func answerOf(e thread.Effects, stitches []thread.Stitch) (thread.Output, uuid.UUID) {
	for _, o := range e.Outputs {
		if (o.Kind == thread.OutboxResponse || o.Kind == thread.OutboxElicitation) && strings.TrimSpace(o.Text) != "" {
			var id uuid.UUID
			if o.Stitch >= 0 && o.Stitch < len(stitches) {
				id = stitches[o.Stitch].ID
			}
			return o, id
		}
	}
	return thread.Output{}, uuid.Nil
}

// verb is what weft did in an answer of kind k.
func verb(k thread.OutboxKind) string {
	if k == thread.OutboxElicitation {
		return "asked"
	}
	return "answered"
}

// questions are the inputs at the end of chain that no answer follows yet
// (what the step answers), but those from platform to, which saw them.
func questions(chain []thread.Stitch, to thread.Platform) []thread.Stitch {
	var out []thread.Stitch
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		if s.Type.IsInput() {
			if s.Source != to {
				out = append(out, s)
			}
			continue
		}
		if isAnswer(s) {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// isAnswer reports whether s settled the input before it: a model's reply
// without tool calls, a question back, a result, an error.
func isAnswer(s thread.Stitch) bool {
	switch s.Type {
	case thread.StitchLLMCall:
		var r struct {
			ToolCalls []json.RawMessage `json:"tool_calls"`
		}
		_ = json.Unmarshal(s.LLMResponse, &r) // unreadable reads as a reply
		return len(r.ToolCalls) == 0
	case thread.StitchClarificationRequest, thread.StitchThreadResult, thread.StitchError, thread.StitchSystemPrompt:
		return true
	}
	return false
}

// exchange is the questions asked and their answer, attributed.
func exchange(from thread.Platform, qs []thread.Stitch, answer thread.Output) string {
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%s asked in %s:\n%s\n\n", authorName(q), placeName(q.Source), quote(q.Content))
	}
	fmt.Fprintf(&b, "weft %s in %s:\n\n%s", verb(answer.Kind), placeName(from), answer.Text)
	return b.String()
}

// maxSummaryAnswer bounds the answer quoted in a summary: the digest points
// at the conversation, it does not repeat it.
const maxSummaryAnswer = 1500

// Summary is a digest of the conversation in chain (its newest stitches,
// in order) for a surface on platform to: how many questions were asked
// elsewhere since to last spoke, the last of them and its answer. It is
// built from the chain, not by a model: it cannot misstate what was said,
// costs nothing, and cannot fail. ok is false when there is no answer to
// tell of.
func Summary(chain []thread.Stitch, to thread.Platform) (text string, ok bool) {
	var answer, question *thread.Stitch
	asked := 0
walk:
	for i := len(chain) - 1; i >= 0; i-- {
		s := &chain[i]
		switch {
		case s.Type.IsInput() && s.Source == to:
			break walk // to saw what came before
		case s.Type.IsInput():
			asked++
			if question == nil && answer != nil {
				question = s
			}
		case answer == nil && answerText(s) != "":
			answer = s
		}
	}
	if answer == nil {
		return "", false
	}
	var b strings.Builder
	where := "elsewhere"
	if question != nil {
		where = "in " + placeName(question.Source)
	}
	switch asked {
	case 0:
		fmt.Fprintf(&b, "The conversation went on %s.", where)
	case 1:
		fmt.Fprintf(&b, "The conversation went on %s: 1 question.", where)
	default:
		fmt.Fprintf(&b, "The conversation went on %s: %d questions.", where, asked)
	}
	if question != nil {
		fmt.Fprintf(&b, " The last, from %s:\n%s", authorName(*question), quote(question.Content))
	}
	a := answerText(answer)
	if r := []rune(a); len(r) > maxSummaryAnswer {
		a = string(r[:maxSummaryAnswer]) + "…"
	}
	fmt.Fprintf(&b, "\n\nweft's last answer:\n\n%s", a)
	return b.String(), true
}

// answerText is what a stitch said to the user as an answer; "" for
// anything else.
func answerText(s *thread.Stitch) string {
	if (s.Type == thread.StitchLLMCall || s.Type == thread.StitchClarificationRequest) && isAnswer(*s) {
		return strings.TrimSpace(s.Content)
	}
	return ""
}

// SummaryID is the outbox id of the summary for s of a thread's
// conversation as it stood at after: one summary, however often its job
// runs (a retry after a crash between the write and River's completion).
func SummaryID(threadID uuid.UUID, s Surface, after int64) uuid.UUID {
	return uuid.NewSHA1(threadID, fmt.Appendf(nil, "echo-summary/%s/%s/%d", s.Platform, s.Target, after))
}

func authorName(s thread.Stitch) string {
	if s.Author != nil && s.Author.Name != "" {
		return s.Author.Name
	}
	return "Someone"
}

func placeName(p thread.Platform) string {
	if !p.Valid() {
		return "another place"
	}
	return p.Title()
}

// quote marks text as quoted, line by line (Markdown's quote, which every
// platform's markup reads).
func quote(text string) string {
	return "> " + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n> ")
}
