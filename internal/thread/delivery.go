package thread

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Inbound is one delivery of an inbound event, as the ledger records it.
type Inbound struct {
	Platform   Platform
	DeliveryID string
	// EventKey is the event's own identity (a Linear session id for created,
	// an activity id for prompted, a Discord message id). A platform may
	// redeliver an event under a new delivery id; the key catches that.
	EventKey  string
	EventType string
	Action    string
	Outcome   InboundOutcome
	ThreadID  uuid.UUID
	Payload   json.RawMessage
}

// InboundOutcome is what weft did with an inbound delivery.
type InboundOutcome string

// Inbound outcomes.
const (
	InboundProcessed InboundOutcome = "processed"
	InboundIgnored   InboundOutcome = "ignored"
)

// OutboxKind is what an outbox message is on its platform.
type OutboxKind string

// Outbox kinds: Linear activity types, a Discord message, a Linear session
// update, and a notice: weft's own word on a turn's state (the model is
// busy, retrying), which every surface shows, unlike the model's thoughts.
const (
	OutboxThought       OutboxKind = "thought"
	OutboxAction        OutboxKind = "action"
	OutboxElicitation   OutboxKind = "elicitation"
	OutboxResponse      OutboxKind = "response"
	OutboxError         OutboxKind = "error"
	OutboxMessage       OutboxKind = "message"
	OutboxSessionUpdate OutboxKind = "session_update"
	OutboxNotice        OutboxKind = "notice"
)

// OutboxStatus is where an outbox message is on its way out.
type OutboxStatus string

// Outbox statuses.
const (
	OutboxPending OutboxStatus = "pending"
	OutboxSending OutboxStatus = "sending"
	OutboxSent    OutboxStatus = "sent"
	OutboxFailed  OutboxStatus = "failed"
	// OutboxDropped is a progress post that failed and was dropped when an
	// answer after it was ready (db.Queries.ClaimOutbox).
	OutboxDropped OutboxStatus = "dropped"
)

// Final reports whether the row is done with: sent, failed or dropped.
func (s OutboxStatus) Final() bool {
	return s == OutboxSent || s == OutboxFailed || s == OutboxDropped
}

// Outbox is one message or activity for a platform. It is written in the
// transaction of the stitch it comes from and sent later; its ID is the
// idempotency key on the platform, so a retried send never posts twice.
type Outbox struct {
	ID            uuid.UUID
	ThreadID      uuid.UUID
	StitchID      uuid.UUID // uuid.Nil when not tied to a stitch
	Platform      Platform
	Target        string // a Linear session id or a Discord channel id
	Kind          OutboxKind
	Body          json.RawMessage
	Status        OutboxStatus
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	ExternalID    string // the platform's id for what was sent
	CreatedAt     time.Time
	SentAt        time.Time
}

// Shows says whether a surface on p shows an output of kind k: Linear's
// activity timeline shows every kind, a Discord or Slack thread only the
// conversation.
func (p Platform) Shows(k OutboxKind) bool {
	if p == PlatformDiscord || p == PlatformSlack {
		return k == OutboxResponse || k == OutboxElicitation || k == OutboxError || k == OutboxMessage ||
			k == OutboxNotice
	}
	return true
}

// sessionStatus is the Linear session's state after an activity of each kind.
var sessionStatus = map[OutboxKind]SessionStatus{
	OutboxThought:     SessionActive,
	OutboxAction:      SessionActive,
	OutboxNotice:      SessionActive,
	OutboxElicitation: SessionAwaitingInput,
	OutboxResponse:    SessionComplete,
	OutboxError:       SessionError,
}

// SessionAfter is the state a surface on p is in after an output of kind
// k, for a platform whose surfaces have one (a Linear session's); ok is
// false when there is none to set.
func (p Platform) SessionAfter(k OutboxKind) (st SessionStatus, ok bool) {
	if p != PlatformLinear {
		return "", false
	}
	st, ok = sessionStatus[k]
	return st, ok
}
