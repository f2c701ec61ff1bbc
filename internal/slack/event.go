package slack

import (
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// Action is what a Slack event does to weft's store.
type Action string

// Slack actions.
const (
	// ActionMessage stores a message of a tracked Slack thread; with Open it
	// may start the weft thread (a mention, a direct message).
	ActionMessage Action = "message"
	// ActionEdit and ActionDelete update the stitch a message became.
	ActionEdit   Action = "edit"
	ActionDelete Action = "delete"
	// ActionIgnore records the delivery only.
	ActionIgnore Action = "ignore"
)

// Event is one Slack event delivery in the domain's terms: the ledger
// entry (by Slack's event id) and what it means. The Events API and Socket
// Mode doors both hand these to the Recorder.
type Event struct {
	EventID   string
	EventType string // the inner event's type, with its subtype: "message_changed"
	Action    Action
	// Thread is the Slack thread the message belongs to (its parent's ts);
	// CreatedBy is the message's author, for a thread it opens.
	Thread thread.SlackAttachment
	// Message is the stitch for ActionMessage (content, ExternalID from
	// thread.SlackMessageID, author); for an edit or delete, ExternalID names the
	// message and Content holds an edit's text.
	Message thread.Stitch
	// Open lets a message start a weft thread on an untracked Slack thread.
	Open bool
	// Answer enqueues a turn for a stored message; false for another bot's
	// message that does not mention weft.
	Answer bool
	// Goal is the new thread's goal when Open starts one.
	Goal string
	At   time.Time
}
