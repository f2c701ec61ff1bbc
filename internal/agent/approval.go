package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

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
