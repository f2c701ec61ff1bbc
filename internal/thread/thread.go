package thread

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// DefaultAgent is the agent a thread runs when none is named.
const DefaultAgent = "weft"

// Thread is one agent conversation, whatever platforms it is attached to.
type Thread struct {
	ID            uuid.UUID
	Type          Type
	Goal          string
	Status        Status
	WaitingReason WaitingReason   // set exactly when Status is waiting
	Result        json.RawMessage // set exactly when Status is completed
	Error         string          // set exactly when Status is failed
	AgentName     string
	StitchCount   int64
	HeadStitchID  uuid.UUID // uuid.Nil for a thread without stitches
	LeaseOwner    string
	LeaseExpires  time.Time // zero when no lease is held

	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastActivityAt time.Time
	FinishedAt     time.Time // zero until the thread first finishes
}

// StatusChange is a transition and the fields that go with the new status.
type StatusChange struct {
	To            Status
	WaitingReason WaitingReason   // required when To is waiting
	Result        json.RawMessage // required when To is completed
	Error         string          // required when To is failed
}

// Validate checks that the change carries what its status requires, so the
// database's checks never have to reject it.
func (c StatusChange) Validate() error {
	switch {
	case !c.To.Valid():
		return newError(ErrInvalid, "unknown status "+string(c.To))
	case c.To == StatusWaiting && c.WaitingReason == "":
		return newError(ErrInvalid, "waiting needs a reason")
	case c.To == StatusCompleted && len(c.Result) == 0:
		return newError(ErrInvalid, "completed needs a result")
	case c.To == StatusFailed && c.Error == "":
		return newError(ErrInvalid, "failed needs an error")
	}
	return nil
}
