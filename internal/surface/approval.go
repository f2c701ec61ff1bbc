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

// ShowingDecisions is a platform that rewrites its post of a request for
// approval once the request is decided elsewhere (another platform, the
// API, the console, the timeout): the post says who decided and loses its
// buttons. post is the request's outbox row as sent (ExternalID its
// message). Best effort: a post left as it was still tells a later click
// who decided.
type ShowingDecisions interface {
	ShowDecided(ctx context.Context, post thread.Outbox, a *thread.Approval) error
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
