package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// DefaultApprovalTimeout is how long a call waits for a person's approval
// when Runner.ApprovalTimeout is not set.
const DefaultApprovalTimeout = 24 * time.Hour

// maxShownArguments bounds the arguments an approval request shows; the
// full call stays in its stitch and row.
const maxShownArguments = 1500

// Approve and Deny are the options an approval request offers.
const (
	OptionApprove = "Approve"
	OptionDeny    = "Deny"
)

// askApproval adds to e the request for a person's approval of c: an
// approval_request stitch (whose id is the approval's), the approval's row,
// the question on the conversation's surface, and the thread waiting for
// the decision.
func (r *Runner) askApproval(th *thread.Thread, c llm.ToolCall, tool tools.Tool, e *thread.Effects) {
	server, name := tool.Server, tool.ServerTool
	if server == "" {
		server, name = "weft", tool.Name
	}
	args := FormatArguments(c.Arguments)
	text := fmt.Sprintf("weft wants to call %s on the MCP server %s with:\n```\n%s\n```\nApprove or deny?", name, server, args)
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	timeout := r.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	id := thread.NewID()
	e.Stitches = append(e.Stitches, thread.Stitch{ID: id, Type: thread.StitchApprovalRequest, Content: text,
		ToolName: c.Name, ToolInput: c.Arguments, Metadata: thread.Meta{ApprovalFor: c.ID}.JSON()})
	i := len(e.Stitches) - 1
	e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxElicitation, Stitch: i, OutboxBody: thread.OutboxBody{
		Text: text, Options: []string{OptionApprove, OptionDeny},
		Approval: &thread.ApprovalAsk{ID: id, Server: server, Tool: name, Arguments: args},
	}})
	arguments := c.Arguments
	if !json.Valid(arguments) {
		arguments = mustJSON(string(c.Arguments))
	}
	e.Approvals = append(e.Approvals, thread.ApprovalRequest{Stitch: i, Approval: thread.Approval{
		ID: id, ThreadID: th.ID, ToolCallID: c.ID, ToolName: c.Name, Server: server, Tool: name,
		Arguments: arguments, Status: thread.ApprovalPending, ExpiresAt: now().Add(timeout),
	}})
	e.Status = &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingApproval}
}

// FormatArguments is a call's arguments as a person reads them: indented
// JSON, clipped. They are the model's own words, never a value weft took
// from its environment (a server's env or headers).
func FormatArguments(raw json.RawMessage) string {
	var buf bytes.Buffer
	out := string(raw)
	if json.Indent(&buf, raw, "", "  ") == nil {
		out = buf.String()
	}
	if r := []rune(out); len(r) > maxShownArguments {
		out = string(r[:maxShownArguments-1]) + "…"
	}
	return out
}

// ReplyDecision is a decision a person made by replying to a request for
// approval in the conversation (an elicitation's select, a chat message,
// the API).
type ReplyDecision struct {
	ApprovalID uuid.UUID
	Decision   thread.Decision
	Reason     string
	// By is who replied (nil: the thread's API or CLI user), Via where.
	By  *thread.Author
	Via thread.Platform
}

// ApprovalDecider decides requests for approval from replies; the first
// decision wins (a *thread.DecidedError after it), and a person
// WEFT_APPROVERS does not name is refused (thread.ErrNotApprover).
type ApprovalDecider interface {
	DecideReply(ctx context.Context, r ReplyDecision) (*thread.Approval, error)
}

// decide takes the reply p found as the decision on the request the turn
// waits on, and returns the chain with the decision (ok: its Effects are
// empty), or, when the person may not decide or nothing can decide here,
// a step that says so and leaves the thread waiting.
func (r *Runner) decide(ctx context.Context, th *thread.Thread, store Store, chain []thread.Stitch, p plan) ([]thread.Stitch, thread.Effects, error) {
	var err error
	if r.Approvals == nil {
		err = errors.New("no approvals")
	} else {
		_, err = r.Approvals.DecideReply(ctx, ReplyDecision{ApprovalID: p.asked.ID, Decision: p.decision, Reason: p.reason,
			By: p.reply.Author, Via: p.reply.Source})
	}
	var decided *thread.DecidedError
	var msg string
	switch {
	case err == nil, errors.As(err, &decided):
		// The chain holds the decision now (this one, or the first).
		chain, err = store.Record(ctx, th.ID, chain, thread.Effects{}, false)
		return chain, thread.Effects{}, err
	case errors.Is(err, thread.ErrNotApprover):
		who := "This person"
		if p.reply.Author != nil && p.reply.Author.Name != "" {
			who = p.reply.Author.Name
		}
		msg = who + " may not approve tool calls here; the request still waits for an approver."
	case r.Approvals == nil:
		msg = "A reply cannot decide this request here; decide it from weft's console or API."
	default:
		return chain, thread.Effects{}, fmt.Errorf("decide approval: %w", err)
	}
	return chain, thread.Effects{
		Stitches: []thread.Stitch{{Type: thread.StitchAgentThought, Content: msg, Metadata: thread.Meta{AnsweredThrough: p.reply.Seq}.JSON()}},
		Outputs:  []thread.Output{{Kind: thread.OutboxNotice, OutboxBody: thread.OutboxBody{Text: msg}}},
		Status:   &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingApproval},
	}, nil
}
