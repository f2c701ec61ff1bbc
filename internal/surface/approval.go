package surface

import (
	"context"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// ApprovalDecision is a person's decision on a request for approval, made
// with a platform's own controls (a button).
type ApprovalDecision struct {
	ApprovalID uuid.UUID
	Decision   thread.Decision
	Reason     string
	// User is who decided, by their id and name on Platform.
	User     thread.Author
	Platform thread.Platform
}

// Approvals decides requests for approval; *approval.Decider is one. The
// first decision wins: a later one fails with a *thread.DecidedError naming
// who decided; a person WEFT_APPROVERS does not name with
// thread.ErrNotApprover; an unknown request with thread.ErrNotFound. A
// decision returns only once it is stored.
type Approvals interface {
	DecideOnPlatform(ctx context.Context, d ApprovalDecision) (*thread.Approval, error)
}

// Approving is a platform that shows a request for approval (an
// elicitation whose body carries thread.ApprovalAsk) with its own controls,
// Approve and Deny, and takes the decision through them (buttons on the
// message, where the platform has them). app.New hands it the
// Approvals before its routes are mounted. A platform that is not Approving
// still shows the request, as an elicitation with the two options.
type Approving interface {
	DecideThrough(a Approvals)
}
