package linear

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weft-dev/weft/internal/surface"
)

// PlanStatus is the state of one step of a session's plan.
type PlanStatus string

// The plan step states Linear renders.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "inProgress"
	PlanCompleted  PlanStatus = "completed"
	PlanCanceled   PlanStatus = "canceled"
)

// PlanStep is one step of the plan shown on an agent session.
type PlanStep struct {
	Content string     `json:"content"`
	Status  PlanStatus `json:"status"`
}

// SessionUpdate changes what Linear shows on an agent session. Zero fields
// are left as they are.
type SessionUpdate struct {
	// ExternalURL links the session to weft's own page for it; setting it
	// also keeps a new session from being marked unresponsive. It replaces
	// the session's external URLs.
	ExternalURL string
	// ExternalURLLabel labels the link; empty means "weft".
	ExternalURLLabel string
	// Plan replaces the whole plan (Linear has no per-step update). A nil
	// Plan leaves it alone; an empty non-nil one clears it.
	Plan []PlanStep
}

// UpdateSession applies u to the agent session.
func (c *Client) UpdateSession(ctx context.Context, sessionID string, u SessionUpdate) error {
	const op = "update session"
	var urls []externalURLInput
	if u.ExternalURL != "" {
		label := u.ExternalURLLabel
		if label == "" {
			label = "weft"
		}
		urls = []externalURLInput{{Label: label, Url: u.ExternalURL}}
	}
	var plan json.RawMessage
	if u.Plan != nil {
		// Linear documents the plan as an array of steps, although the
		// input field is typed JSONObject.
		var err error
		if plan, err = json.Marshal(u.Plan); err != nil {
			return &surface.Error{Platform: platform, Kind: surface.KindInvalid, Op: op, Err: err}
		}
	}
	if urls == nil && plan == nil {
		return &surface.Error{Platform: platform, Kind: surface.KindInvalid, Op: op, Err: errors.New("nothing to update")}
	}
	return c.do(ctx, op, func(ctx context.Context) error {
		resp, err := agentSessionUpdate(ctx, c.gql, sessionID, urls, plan)
		if err == nil && !resp.AgentSessionUpdate.Success {
			return errNotSuccessful
		}
		return err
	})
}
