package thread

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Decision is a person's answer to an approval request.
type Decision string

// Decisions.
const (
	Approve Decision = "approve"
	Deny    Decision = "deny"
)

// Valid reports whether d is approve or deny.
func (d Decision) Valid() bool { return d == Approve || d == Deny }

// ApprovalStatus is where an approval request stands.
type ApprovalStatus string

// Approval statuses.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
)

// StatusOf is the status a decision leaves a request in.
func (d Decision) StatusOf() ApprovalStatus {
	if d == Approve {
		return ApprovalApproved
	}
	return ApprovalDenied
}

// Approval is a tool call waiting for, or decided by, a person. Its ID is
// its approval_request stitch's.
type Approval struct {
	ID         uuid.UUID
	ThreadID   uuid.UUID
	ToolCallID string
	ToolName   string // as the model calls it: mcp__SERVER__TOOL
	Server     string
	Tool       string
	Arguments  json.RawMessage
	Status     ApprovalStatus
	// DecidedBy is who decided: a platform user id, or "weft" when the
	// request timed out; DecidedName their name as shown; DecidedVia
	// where (a platform, "api", "console", "weft").
	DecidedBy   string
	DecidedName string
	DecidedVia  string
	Reason      string
	DecidedAt   time.Time
	ExpiresAt   time.Time
	CreatedAt   time.Time
}

// Decider is who decided, as it is shown: their name, else their id.
func (a *Approval) Decider() string {
	if a.DecidedName != "" {
		return a.DecidedName
	}
	return a.DecidedBy
}

// ErrNotApprover is a decision by someone WEFT_APPROVERS does not name.
var ErrNotApprover = errors.New("not among the approvers")

// DecidedError is a decision on a request decided before: the first
// decision stands, and Approval says who made it. It is an ErrConflict.
type DecidedError struct{ Approval *Approval }

func (e *DecidedError) Error() string {
	return fmt.Sprintf("already %s by %s", e.Approval.Status, e.Approval.Decider())
}

// Is makes a DecidedError an ErrConflict.
func (e *DecidedError) Is(target error) bool { return target == ErrConflict }

// ApprovalRequest is an approval to store with a step: Stitch is the index
// in Effects.Stitches of its approval_request stitch, whose id it takes.
type ApprovalRequest struct {
	Approval
	Stitch int
}

// ApprovalAsk is what a platform shows of an approval request: the
// request's id (its buttons' key), and the server, tool and arguments as
// formatted for people.
type ApprovalAsk struct {
	ID        uuid.UUID `json:"id"`
	Server    string    `json:"server"`
	Tool      string    `json:"tool"`
	Arguments string    `json:"arguments"`
}
