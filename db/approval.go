package db

import (
	"context"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// queueApproval queues the insert of a request for approval.
func queueApproval(ctx context.Context, p *pipeline, a thread.Approval) {
	arg := dbsqlc.InsertApprovalParams{ApprovalID: a.ID, ThreadID: a.ThreadID, ToolCallID: a.ToolCallID,
		ToolName: a.ToolName, Server: a.Server, Tool: a.Tool, Arguments: a.Arguments, ExpiresAt: a.ExpiresAt}
	p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertApproval(ctx, arg)) })
}

// Approval reads a request for approval; thread.ErrNotFound when there is
// none.
func (q *Queries) Approval(ctx context.Context, id uuid.UUID) (*thread.Approval, error) {
	row, err := q.gen.Approval(ctx, id)
	if err != nil {
		return nil, translate(err)
	}
	return approvalOf(row), nil
}

// LockApproval reads a request for approval under its row lock, in a
// transaction: decisions on it are taken one at a time.
func (t *Tx) LockApproval(ctx context.Context, id uuid.UUID) (*thread.Approval, error) {
	row, err := t.gen.LockApproval(ctx, id)
	if err != nil {
		return nil, translate(err)
	}
	return approvalOf(row), nil
}

// ApprovalDecision is a decision to store on a request.
type ApprovalDecision struct {
	Decision thread.Decision
	By, Name string
	Via      string
	Reason   string
}

// DecideApproval stores a decision on a pending request and returns it
// decided; thread.ErrConflict when it was decided before.
func (q *Queries) DecideApproval(ctx context.Context, id uuid.UUID, d ApprovalDecision) (*thread.Approval, error) {
	row, err := q.gen.DecideApproval(ctx, dbsqlc.DecideApprovalParams{ApprovalID: id, Status: string(d.Decision.StatusOf()),
		DecidedBy: &d.By, DecidedName: &d.Name, DecidedVia: &d.Via, Reason: &d.Reason})
	if err != nil {
		err = translate(err)
		if err == thread.ErrNotFound {
			return nil, thread.ErrConflict
		}
		return nil, err
	}
	return approvalOf(row), nil
}

// ThreadApprovals are a thread's requests for approval, oldest first.
func (q *Queries) ThreadApprovals(ctx context.Context, threadID uuid.UUID) ([]thread.Approval, error) {
	rows, err := q.gen.ThreadApprovals(ctx, threadID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]thread.Approval, len(rows))
	for i, r := range rows {
		out[i] = *approvalOf(r)
	}
	return out, nil
}

// ExpiredApprovals are the ids of up to limit requests still pending past
// their time, oldest first.
func (q *Queries) ExpiredApprovals(ctx context.Context, limit int) ([]uuid.UUID, error) {
	ids, err := q.gen.ExpiredApprovals(ctx, int32(limit))
	return ids, translate(err)
}

func approvalOf(r dbsqlc.Approval) *thread.Approval {
	return &thread.Approval{
		ID: r.ApprovalID, ThreadID: r.ThreadID, ToolCallID: r.ToolCallID, ToolName: r.ToolName,
		Server: r.Server, Tool: r.Tool, Arguments: r.Arguments, Status: thread.ApprovalStatus(r.Status),
		DecidedBy: str(r.DecidedBy), DecidedName: str(r.DecidedName), DecidedVia: str(r.DecidedVia),
		Reason: str(r.Reason), DecidedAt: tm(r.DecidedAt), ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt,
	}
}
