package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
)

// Approvals lists and decides a thread's requests for approval.
// *approval.Decider implements it.
type Approvals interface {
	List(ctx context.Context, threadID uuid.UUID) ([]thread.Approval, error)
	Decide(ctx context.Context, r approval.Request) (*thread.Approval, error)
}

// approvalView is a request for approval as the API shows it.
type approvalView struct {
	ID          uuid.UUID       `json:"id"`
	ThreadID    uuid.UUID       `json:"thread_id"`
	ToolCallID  string          `json:"tool_call_id"`
	ToolName    string          `json:"tool_name"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Status      string          `json:"status"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	DecidedName string          `json:"decided_name,omitempty"`
	DecidedVia  string          `json:"decided_via,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	DecidedAt   *time.Time      `json:"decided_at,omitempty"`
	ExpiresAt   time.Time       `json:"expires_at"`
	CreatedAt   time.Time       `json:"created_at"`
}

func viewApproval(a *thread.Approval) approvalView {
	v := approvalView{ID: a.ID, ThreadID: a.ThreadID, ToolCallID: a.ToolCallID, ToolName: a.ToolName, Server: a.Server,
		Tool: a.Tool, Arguments: a.Arguments, Status: string(a.Status), DecidedBy: a.DecidedBy, DecidedName: a.DecidedName,
		DecidedVia: a.DecidedVia, Reason: a.Reason, ExpiresAt: a.ExpiresAt, CreatedAt: a.CreatedAt}
	if !a.DecidedAt.IsZero() {
		v.DecidedAt = &a.DecidedAt
	}
	return v
}

type approvalList struct {
	Approvals []approvalView `json:"approvals"`
}

// decideRequest is POST /api/v1/threads/{id}/approvals/{approval_id}'s body.
type decideRequest struct {
	Decision thread.Decision `json:"decision"`
	Reason   string          `json:"reason"`
}

type decideResponse struct {
	Approval approvalView `json:"approval"`
}

// maxReason bounds a decision's reason.
const maxReason = 2000

// handleApprovalList lists a thread's requests for approval, oldest first.
func handleApprovalList(logger *slog.Logger, a Approvals) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		list, err := a.List(r.Context(), id)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		out := approvalList{Approvals: make([]approvalView, len(list))}
		for i := range list {
			out.Approvals[i] = viewApproval(&list[i])
		}
		httpapi.Encode(w, http.StatusOK, out)
	})
}

// handleApprovalDecide decides a request for approval as the operator
// holding the API's token. The first decision wins: a later one is a 409
// saying who decided.
func handleApprovalDecide(logger *slog.Logger, a Approvals) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		aid, err := uuid.Parse(chi.URLParam(r, "approval_id"))
		if err != nil {
			httpapi.WriteError(w, r, logger, httpapi.Invalid("approval id is not a UUID"))
			return
		}
		req, err := httpapi.Decode[decideRequest](w, r)
		if err == nil {
			err = refuseNUL(req.Reason)
		}
		switch {
		case err != nil:
		case !req.Decision.Valid():
			err = httpapi.Invalid(`decision must be "approve" or "deny"`)
		case len(req.Reason) > maxReason:
			err = httpapi.Invalid("reason is longer than %d bytes", maxReason)
		}
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		got, err := a.Decide(r.Context(), approval.Request{ApprovalID: aid, ThreadID: id, Decision: req.Decision,
			Reason: strings.TrimSpace(req.Reason), By: approval.Who{ID: "api", Name: "the API", Via: approval.ViaAPI}})
		var decided *approval.DecidedError
		if errors.As(err, &decided) {
			err = &httpapi.Error{Code: httpapi.CodeConflict, Message: "the request was " + decided.Error(), Err: err}
		}
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, decideResponse{Approval: viewApproval(got)})
	})
}
