// Package approval decides requests for a person's approval of a tool
// call: the first decision is stored (the request's row and an
// approval_decision stitch) with the turn that acts on it, in one
// transaction; a later one is told who decided. Every surface that shows a
// request (REST, the console, a platform's buttons or its elicitation)
// decides through a Decider, and the leader's sweep denies requests left
// unanswered past their time (Expire).
package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Where a decision may come from besides a platform.
const (
	ViaAPI     = "api"
	ViaConsole = "console"
	// ViaWeft is weft itself: a request that timed out.
	ViaWeft = "weft"
)

// ErrNotApprover is a decision by someone WEFT_APPROVERS does not name.
var ErrNotApprover = thread.ErrNotApprover

// DecidedError is a decision on a request decided before (see
// thread.DecidedError).
type DecidedError = thread.DecidedError

// Who is who decides: a platform user's id and name and the platform
// (Via), or an operator through the API or the console.
type Who struct {
	ID, Name string
	Via      string
}

// Request is a decision to make.
type Request struct {
	ApprovalID uuid.UUID
	// ThreadID, when set, is the thread the request must belong to.
	ThreadID uuid.UUID
	Decision thread.Decision
	Reason   string
	By       Who
}

// Decider decides requests for approval.
type Decider struct {
	Store *db.Store
	Jobs  job.Inserter
	// Approvers are the platform user ids (WEFT_APPROVERS, each a bare id
	// or PLATFORM:ID) who may decide on a platform; empty lets anyone in
	// the conversation decide. Operators (the API, the console) always may.
	Approvers []string
	Logger    *slog.Logger
	// OnDecided, when set, is told of each decision once it is stored:
	// where a platform updates the request it showed.
	OnDecided func(ctx context.Context, a *thread.Approval)
}

// MayDecide reports whether who may decide requests.
func (d *Decider) MayDecide(who Who) bool {
	switch {
	case who.Via == ViaAPI || who.Via == ViaConsole || who.Via == ViaWeft:
		return true
	case len(d.Approvers) == 0:
		return true
	}
	return slices.Contains(d.Approvers, who.ID) || slices.Contains(d.Approvers, who.Via+":"+who.ID)
}

// Decide stores r's decision, the request's approval_decision stitch and a
// turn for its thread, in one transaction, and returns the request
// decided. A request decided before fails with a *DecidedError naming who
// decided; one that does not exist (or is not r.ThreadID's) with
// thread.ErrNotFound; a decider not among the approvers with
// ErrNotApprover. Nothing is written then.
func (d *Decider) Decide(ctx context.Context, r Request) (*thread.Approval, error) {
	if !r.Decision.Valid() {
		return nil, fmt.Errorf("approval: %w: decision %q is neither approve nor deny", thread.ErrInvalid, r.Decision)
	}
	var got *thread.Approval
	err := d.Store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		a, err := tx.LockApproval(ctx, r.ApprovalID)
		if err != nil {
			return err
		}
		if r.ThreadID != uuid.Nil && a.ThreadID != r.ThreadID {
			return thread.ErrNotFound
		}
		if a.Status != thread.ApprovalPending {
			return &DecidedError{Approval: a}
		}
		if !d.MayDecide(r.By) {
			return ErrNotApprover
		}
		if got, err = tx.DecideApproval(ctx, a.ID, db.ApprovalDecision{Decision: r.Decision, By: r.By.ID,
			Name: r.By.Name, Via: r.By.Via, Reason: r.Reason}); err != nil {
			return err
		}
		s := thread.Stitch{Type: thread.StitchApprovalDecision, Content: Describe(got),
			ToolName: a.ToolName, Metadata: thread.Meta{ApprovalFor: a.ToolCallID, Decision: r.Decision}.JSON()}
		if r.By.Via != ViaWeft {
			s.Author = &thread.Author{ID: r.By.ID, Name: r.By.Name}
		}
		if _, err := outbox.Write(ctx, tx, d.Jobs, a.ThreadID, thread.Effects{Stitches: []thread.Stitch{s}}); err != nil {
			return err
		}
		return job.InsertTx(ctx, d.Jobs, tx.Pgx(), job.Turn{ThreadID: a.ThreadID})
	})
	if err != nil {
		return nil, err
	}
	if d.OnDecided != nil {
		d.OnDecided(ctx, got)
	}
	return got, nil
}

// Describe says what was decided, by whom and where, and why: the text of
// the decision's stitch, and what the model reads of a denial.
func Describe(a *thread.Approval) string {
	var b strings.Builder
	switch {
	case a.DecidedVia == ViaWeft && a.Status == thread.ApprovalDenied:
		b.WriteString("denied: no one decided on it in time")
	default:
		fmt.Fprintf(&b, "%s by %s", a.Status, a.Decider())
		if a.DecidedVia != "" {
			fmt.Fprintf(&b, " (%s)", a.DecidedVia)
		}
	}
	if a.Reason != "" {
		b.WriteString(": " + a.Reason)
	}
	return b.String()
}

// expireBatch bounds the requests one sweep denies.
const expireBatch = 100

// Expire denies the requests still pending past their time, each with its
// own transaction, and returns how many it denied. It runs in the
// leader's sweep.
func (d *Decider) Expire(ctx context.Context) (int64, error) {
	ids, err := d.Store.ExpiredApprovals(ctx, expireBatch)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, id := range ids {
		a, err := d.Store.Approval(ctx, id)
		if err != nil {
			return n, err
		}
		wait := a.ExpiresAt.Sub(a.CreatedAt).Round(time.Second)
		_, err = d.Decide(ctx, Request{ApprovalID: id, Decision: thread.Deny,
			Reason: fmt.Sprintf("no one approved it within %s (WEFT_APPROVAL_TIMEOUT)", wait),
			By:     Who{ID: ViaWeft, Name: "weft", Via: ViaWeft}})
		var decided *DecidedError
		switch {
		case errors.As(err, &decided):
			continue // decided meanwhile
		case err != nil:
			return n, err
		}
		n++
	}
	return n, nil
}

// DecideOnPlatform decides as a person on a platform (a click on its
// Approve or Deny button): the surface.Approvals every surface.Approving
// platform gets.
func (d *Decider) DecideOnPlatform(ctx context.Context, r surface.ApprovalDecision) (*thread.Approval, error) {
	return d.Decide(ctx, Request{ApprovalID: r.ApprovalID, Decision: r.Decision, Reason: r.Reason,
		By: Who{ID: r.User.ID, Name: r.User.Name, Via: string(r.Platform)}})
}

var _ surface.Approvals = (*Decider)(nil)

// List is a thread's requests for approval, oldest first; thread.ErrNotFound
// when there is no such thread.
func (d *Decider) List(ctx context.Context, threadID uuid.UUID) ([]thread.Approval, error) {
	if _, err := d.Store.Thread(ctx, threadID); err != nil {
		return nil, err
	}
	return d.Store.ThreadApprovals(ctx, threadID)
}
