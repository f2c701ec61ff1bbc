package thread

import (
	"strings"
	"time"
)

// SlackAction is what a Slack event does to weft's store.
type SlackAction string

// Slack actions.
const (
	// SlackMessage stores a message of a tracked Slack thread; with Open it
	// may start the weft thread (a mention, a direct message).
	SlackMessage SlackAction = "message"
	// SlackEdit and SlackDelete update the stitch a message became.
	SlackEdit   SlackAction = "edit"
	SlackDelete SlackAction = "delete"
	// SlackIgnore records the delivery only.
	SlackIgnore SlackAction = "ignore"
)

// SlackEvent is one Slack event delivery in the domain's terms: the ledger
// entry (by Slack's event id) and what it means. The Events API and Socket
// Mode doors both hand these to the ingester.
type SlackEvent struct {
	EventID   string
	EventType string // the inner event's type, with its subtype: "message_changed"
	Action    SlackAction
	// Thread is the Slack thread the message belongs to (its parent's ts);
	// CreatedBy is the message's author, for a thread it opens.
	Thread SlackAttachment
	// Message is the stitch for SlackMessage (content, ExternalID from
	// SlackMessageID, author); for an edit or delete, ExternalID names the
	// message and Content holds an edit's text.
	Message Stitch
	// Open lets a message start a weft thread on an untracked Slack thread.
	Open bool
	// Answer enqueues a turn for a stored message; false for another bot's
	// message that does not mention weft.
	Answer bool
	// Goal is the new thread's goal when Open starts one.
	Goal string
	At   time.Time
}

// SlackChannelType guesses a conversation's type from its id's prefix, for
// events (app_mention) and commands that do not say.
func SlackChannelType(id string) string {
	switch {
	case strings.HasPrefix(id, "D"):
		return "im"
	case strings.HasPrefix(id, "G"):
		return "group"
	}
	return "channel"
}
