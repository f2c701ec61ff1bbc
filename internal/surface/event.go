package surface

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// EventKind is what an inbound event does to weft's store: the one vocabulary
// every platform's traffic is mapped to.
type EventKind string

// Event kinds.
const (
	// Open starts a weft thread on a platform conversation, with its first
	// message (a Linear session created, a Discord conversation begun, a
	// Slack mention or direct message).
	Open EventKind = "open"
	// Message adds a message to a tracked conversation (a Linear prompt, a
	// Discord or Slack reply).
	Message EventKind = "message"
	// Edit and Delete update the stitch a platform message became.
	Edit   EventKind = "edit"
	Delete EventKind = "delete"
	// Stop asks the agent to stop working the thread (Linear's stop
	// signal).
	Stop EventKind = "stop"
	// Revoke ends a tenant's installation: its tokens stop working.
	Revoke EventKind = "revoke"
	// Ignore records the delivery in the ledger only.
	Ignore EventKind = "ignore"
)

// Event is one inbound delivery in the domain's terms: the ledger entry
// (Inbound: the platform, its delivery id and event key) and what it means.
// A platform's door maps its wire format to Events; the ingester records
// each in one transaction of the same shape whatever the platform.
type Event struct {
	Kind EventKind
	// Inbound is the ledger entry; its Platform names the platform.
	Inbound thread.Inbound
	// Tenant is the workspace, server or team the event came from.
	Tenant thread.Tenant
	// Conversation is the platform conversation's key: the attachment a
	// thread is found by (a Linear session id, a Discord thread id, a
	// Slack channel and thread ts).
	Conversation string
	// Message is the stitch an Open or Message adds; for an Edit or Delete
	// its ExternalID names the message and an Edit's Content holds the new
	// text.
	Message thread.Stitch
	// Goal is the new thread's goal when Open starts one.
	Goal string
	// Answer enqueues a turn for a stored message; false for a message
	// weft keeps but does not answer (another bot's, without a mention).
	Answer bool
	// Attachment is the platform's own description of the conversation
	// (a *thread.LinearAttachment, *thread.DiscordAttachment or
	// *thread.SlackAttachment), stored when Open starts a thread.
	Attachment any
	// Payload is the raw delivery, kept in the ledger.
	Payload json.RawMessage
	At      time.Time
}

// Recorder records inbound events: the ingester implements it, and a
// platform's doors hand it what they receive.
type Recorder interface {
	Record(ctx context.Context, ev Event) error
}
