package surface

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// EventKind is what an inbound event does to weft's store: the one vocabulary
// every platform's traffic is mapped to.
type EventKind string

// Event kinds.
const (
	// Open starts a weft thread on a platform conversation (an agent
	// session created, a conversation begun, a mention or direct
	// message). A conversation that has a thread already takes the
	// event as a Message.
	Open EventKind = "open"
	// Message adds messages to a tracked conversation (a prompt,
	// a reply); one for a conversation weft does not track
	// is recorded as ignored, unless the event Opens.
	Message EventKind = "message"
	// Edit and Delete update the stitch a platform message became.
	Edit   EventKind = "edit"
	Delete EventKind = "delete"
	// Stop stops the agent working the conversation's thread, recording
	// the request and confirming it (a platform's stop signal); a conversation
	// without a thread gets one first, as Open would make it.
	Stop EventKind = "stop"
	// Close and Reopen record that a conversation was closed on its
	// platform (a thread archived or deleted) or came back. The
	// weft thread neither completes nor fails.
	Close  EventKind = "close"
	Reopen EventKind = "reopen"
	// Revoke ends a tenant's installation: its tokens stop working.
	Revoke EventKind = "revoke"
	// Command records a command (an interaction, a slash command) in the
	// ledger, so that a replay is seen; the door runs it.
	Command EventKind = "command"
	// Ignore records the delivery in the ledger only.
	Ignore EventKind = "ignore"
)

// Job is a job an event enqueues with a new thread's turn (river.JobArgs).
type Job interface {
	Kind() string
}

// Event is one inbound delivery in the domain's terms: the ledger entry
// and what it means. A platform's door maps its wire format to Events;
// the ingester records each in one transaction of the same shape whatever
// the platform: ledger entry, thread found by its conversation (or built),
// stitches, acknowledging outbox row, jobs.
type Event struct {
	Kind EventKind
	// Inbound is the ledger entry; its Platform names the platform. With
	// no DeliveryID, each of Messages is its own delivery, keyed by its
	// external id (a gateway's messages), and an Edit or Delete writes no
	// ledger entry.
	Inbound thread.Inbound
	// Conversation is the platform conversation: the thread is found by
	// it, and Open (or Stop) builds one attached to it.
	Conversation thread.Attachment
	// Opens lets a Message build the thread, from Goal and Prompt, of a
	// conversation weft does not track yet (a mention in an untracked
	// thread, a prompt that arrives before its session's created event).
	// Open builds one without looking first, in a batch; Opens looks
	// first, for events that mostly find their thread.
	Opens bool
	// Goal and Prompt make the thread Open (or Opens, or Stop) builds: its
	// goal and its initial prompt.
	Goal   string
	Prompt thread.Stitch
	// Messages are the inputs an Open or Message adds, oldest first; one
	// that is the new thread's Prompt (same external id) is not added
	// again. For an Edit or Delete, Messages[0] names the stitch by its
	// ExternalID and holds an Edit's new Content; for a Stop, it is the
	// stop request.
	Messages []thread.Stitch
	// Answer enqueues a turn when a message was added; false for messages
	// weft keeps but does not answer (another bot's, without a mention).
	// Open always enqueues one.
	Answer bool
	// Ack is the outbox row (its thread left unset) that acknowledges a
	// new thread at once on its platform (a first thought, before the
	// platform's deadline). It is sent express where the ingester has an
	// express sender, else by a delivery job.
	Ack *thread.Outbox
	// Jobs are enqueued with a new thread's turn (a platform's
	// follow-up on its side, such as moving a delegated issue to started).
	Jobs []Job
	// Reply confirms a Stop on the conversation.
	Reply string
	// SeenThrough is the newest message id a backfill read, its own
	// included: the conversation's backfill cursor moves up to it.
	SeenThrough string
	// Tenant is the installation a Revoke ends.
	Tenant thread.Tenant
	// At is when the platform says the event happened (an edit's time).
	At time.Time
}

// Recorded is what recording an Event did.
type Recorded struct {
	// Duplicate: the delivery (or every message) was recorded before, and
	// nothing new was written.
	Duplicate bool
	// Ignored: the ledger entry only, for a conversation weft does not
	// track (or nothing, with no delivery id).
	Ignored bool
	// ThreadID is the thread the event went to; uuid.Nil when none.
	ThreadID uuid.UUID
	// Added counts the messages stored.
	Added int
	// Revoked: a Revoke ended an installation that was active.
	Revoked bool
}

// Recorder records inbound events: the ingester implements it, and a
// platform's doors hand it what they receive.
type Recorder interface {
	Record(ctx context.Context, ev Event) (Recorded, error)
}
