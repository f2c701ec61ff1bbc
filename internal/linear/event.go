package linear

import (
	"encoding/json"
	"time"
)

// Actions of an AgentSessionEvent, and the signal a user's stop request
// carries.
const (
	ActionCreated  = "created"
	ActionPrompted = "prompted"
	SignalStop     = "stop"
)

// Event is a parsed webhook delivery.
type Event interface {
	// Meta returns the fields every delivery carries.
	Meta() Envelope
	// IdentityKey identifies what the event is about, for deduplication
	// across redeliveries: the same event delivered twice (Linear retries,
	// and sometimes delivers twice anyway) has the same key. It is never
	// the body's webhookId, which names the webhook configuration and is
	// the same for every event.
	IdentityKey() string
}

// Envelope holds the fields common to Linear's webhook bodies.
type Envelope struct {
	Type           string // e.g. "AgentSessionEvent"
	Action         string // e.g. "created"
	OrganizationID string // the workspace
	OAuthClientID  string
	AppUserID      string // the agent's user in this workspace
	WebhookID      string // the webhook configuration, not the delivery
	CreatedAt      time.Time
	// Timestamp is the signed webhookTimestamp: when this delivery (not
	// the event) was sent. Retries carry a fresh one.
	Timestamp time.Time
}

// Meta returns the envelope.
func (e Envelope) Meta() Envelope { return e }

// IdentityKey identifies events that have no id of their own by type,
// action, workspace and creation time; createdAt, unlike webhookTimestamp,
// stays the same when Linear retries a delivery.
func (e Envelope) IdentityKey() string {
	return e.Type + "/" + e.Action + "/" + e.OrganizationID + "/" + e.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// AgentSessionEvent is Linear's AgentSessionEvent: a session was created
// (the agent was mentioned or delegated an issue) or a user prompted an
// existing session (a follow-up, an answer to an elicitation, or a stop
// request).
type AgentSessionEvent struct {
	Envelope
	Session Session
	Issue   *IssueRef   // nil for sessions not attached to an issue
	Comment *CommentRef // the root comment of the session's thread
	// Creator started the session; nil when an automation or another agent
	// did.
	Creator *UserRef
	// PromptContext, PreviousComments and Guidance come with created
	// events only. PromptContext is Linear's own rendering of the issue,
	// thread and guidance for a prompt.
	PromptContext    string
	PreviousComments []CommentRef
	// Guidance rules; the nearest team's rule takes precedence.
	Guidance []GuidanceRule
	// Prompt is the user's message, for prompted events only.
	Prompt *Prompt
}

// IdentityKey is the session id for created events and the prompt
// activity's id for prompted ones: the ids Linear redelivers unchanged.
func (e *AgentSessionEvent) IdentityKey() string {
	if e.Action == ActionPrompted && e.Prompt != nil {
		return e.Prompt.ActivityID
	}
	return e.Session.ID
}

// IsStop reports whether the event is a user's stop request: the agent must
// stop working at once and confirm with a final response or error.
func (e *AgentSessionEvent) IsStop() bool {
	return e.Prompt != nil && e.Prompt.Signal == SignalStop
}

// Session is the agent session an event belongs to.
type Session struct {
	ID              string
	Status          string // pending, active, awaitingInput, complete, error, stale
	URL             string
	IssueID         string
	CommentID       string // root comment of the session's thread
	SourceCommentID string // the comment that spawned it, if in another thread
	CreatorID       string
}

// IssueRef is the issue as a webhook describes it. Its workflow state,
// labels and delegate are not included: Client.Issue fetches them.
type IssueRef struct {
	ID          string
	Identifier  string
	Title       string
	Description string
	URL         string
	TeamID      string
	TeamKey     string
	TeamName    string
	// ProjectID is read when present; Linear's schema does not promise it
	// in webhooks, so an empty value means "unknown", not "no project".
	ProjectID string
}

// CommentRef is a comment as a webhook describes it.
type CommentRef struct {
	ID      string
	Body    string
	UserID  string
	IssueID string
}

// UserRef is a user as a webhook describes it.
type UserRef struct {
	ID    string
	Name  string
	Email string
}

// GuidanceRule is workspace or team guidance for agents.
type GuidanceRule struct {
	Body     string
	Origin   string // "team" or "organization"
	TeamName string // for team rules
}

// Prompt is the user's message in a prompted event.
type Prompt struct {
	// ActivityID is the id of the prompt activity, the event's identity.
	ActivityID string
	Body       string
	// Signal is set for special prompts, e.g. SignalStop.
	Signal          string
	SignalMetadata  json.RawMessage
	SourceCommentID string
	User            *UserRef
}

// OAuthAppRevoked tells that a workspace uninstalled the app; its tokens no
// longer work.
type OAuthAppRevoked struct {
	Envelope
}

// PermissionChange tells that a workspace admin changed which teams the app
// can access.
type PermissionChange struct {
	Envelope
	CanAccessAllPublicTeams bool
	AddedTeamIDs            []string
	RemovedTeamIDs          []string
}

// UnknownEvent is any delivery Parse has no type for (inbox notifications,
// entity webhooks, new actions); Type and Action are kept so the handler
// can log it and answer 200.
type UnknownEvent struct {
	Envelope
	Body json.RawMessage
}
