package thread

// Type says whether a thread works a goal on its own or converses with people.
type Type string

// Thread types.
const (
	TypeAutonomous  Type = "autonomous"
	TypeInteractive Type = "interactive"
)

// Valid reports whether t is a known thread type.
func (t Type) Valid() bool { return t == TypeAutonomous || t == TypeInteractive }

// Status is where a thread is in its life.
type Status string

// Thread statuses.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusWaiting   Status = "waiting"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusAborted   Status = "aborted"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{StatusPending, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusAborted}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Final reports whether no turn runs in this status until new input arrives.
func (s Status) Final() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusAborted
}

// transitions is the status machine, the one place it is written down. New
// input reopens a finished thread (a prompt on a completed Linear session, a
// message after a stop), so every final status may go back to running.
var transitions = map[Status][]Status{
	StatusPending:   {StatusRunning, StatusFailed, StatusAborted},
	StatusRunning:   {StatusWaiting, StatusCompleted, StatusFailed, StatusAborted},
	StatusWaiting:   {StatusRunning, StatusCompleted, StatusFailed, StatusAborted}, // failed: its answer could not be posted
	StatusCompleted: {StatusRunning},
	StatusFailed:    {StatusRunning},
	StatusAborted:   {StatusRunning},
}

// CanTransition reports whether a thread may go from one status to another.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// SourcesOf lists the statuses from which a thread may move to to.
func SourcesOf(to Status) []Status {
	var from []Status
	for _, s := range Statuses {
		if CanTransition(s, to) {
			from = append(from, s)
		}
	}
	return from
}

// WaitingReason says what a waiting thread waits for.
type WaitingReason string

// Waiting reasons: an answer to the agent's question, simply the next
// message of an idle conversation, or a person's decision on a tool call
// that needs approval.
const (
	WaitingClarification WaitingReason = "clarification"
	WaitingIdle          WaitingReason = "idle"
	WaitingApproval      WaitingReason = "approval"
)
