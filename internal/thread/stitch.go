package thread

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// StitchType is the kind of step a stitch records.
type StitchType string

// Stitch types.
const (
	StitchSystemPrompt         StitchType = "system_prompt"
	StitchInitialPrompt        StitchType = "initial_prompt"
	StitchLLMCall              StitchType = "llm_call"
	StitchToolCall             StitchType = "tool_call"
	StitchThreadResult         StitchType = "thread_result"
	StitchDiscordMessage       StitchType = "discord_message"
	StitchSlackMessage         StitchType = "slack_message"
	StitchGitHubMessage        StitchType = "github_message"
	StitchLinearActivity       StitchType = "linear_activity"
	StitchAgentThought         StitchType = "agent_thought"
	StitchClarificationRequest StitchType = "clarification_request"
	StitchError                StitchType = "error"
	// StitchFeedback is a person's rating of an answer (Slack's feedback
	// buttons): shown to operators, never to the model.
	StitchFeedback StitchType = "feedback"
	// StitchApprovalRequest asks a person to approve a tool call; its id
	// is the approval's.
	StitchApprovalRequest StitchType = "approval_request"
	// StitchApprovalDecision records a person's (or the timeout's)
	// decision on an approval request.
	StitchApprovalDecision StitchType = "approval_decision"
)

// StitchTypes lists every stitch type.
var StitchTypes = []StitchType{
	StitchSystemPrompt, StitchInitialPrompt, StitchLLMCall, StitchToolCall, StitchThreadResult,
	StitchDiscordMessage, StitchLinearActivity, StitchAgentThought, StitchClarificationRequest, StitchError,
	StitchSlackMessage, StitchGitHubMessage, StitchFeedback, StitchApprovalRequest, StitchApprovalDecision,
}

// Valid reports whether t is a known stitch type.
func (t StitchType) Valid() bool {
	for _, v := range StitchTypes {
		if t == v {
			return true
		}
	}
	return false
}

// IsInput reports whether a stitch of this type is input a turn must answer.
func (t StitchType) IsInput() bool {
	return t == StitchInitialPrompt || t == StitchDiscordMessage || t == StitchLinearActivity || t == StitchSlackMessage ||
		t == StitchGitHubMessage
}

// IsChatMessage reports whether a stitch of this type is a message in a
// chat, where several people write and each message says who wrote it.
// The other inputs (a prompt, an issue's activity) come from the one
// person the thread is with.
func (t StitchType) IsChatMessage() bool {
	return t == StitchDiscordMessage || t == StitchSlackMessage || t == StitchGitHubMessage
}

// Author is who wrote a stitch that came from a person (or another bot).
type Author struct {
	ID   string
	Name string
	Bot  bool
}

// Stitch is one step of a thread. Fields that do not apply to its type are
// left zero.
type Stitch struct {
	ID         uuid.UUID
	ThreadID   uuid.UUID
	PreviousID uuid.UUID // uuid.Nil for the root
	Seq        int64     // 1 for the root
	Type       StitchType
	Content    string

	LLMRequest   json.RawMessage
	LLMResponse  json.RawMessage
	Model        string
	InputTokens  int
	OutputTokens int
	Latency      time.Duration

	ToolName   string
	ToolInput  json.RawMessage
	ToolOutput json.RawMessage
	ToolError  bool

	Metadata json.RawMessage

	// Source and ExternalID name the platform event the stitch came from;
	// together they are unique, so a redelivered event is never stored twice.
	Source     Platform
	ExternalID string
	Author     *Author

	EditedAt  time.Time
	DeletedAt time.Time
	CreatedAt time.Time
}

// Validate checks the fields the database would otherwise reject.
func (s *Stitch) Validate() error {
	if !s.Type.Valid() {
		return newError(ErrInvalid, "unknown stitch type "+string(s.Type))
	}
	if s.ExternalID != "" && s.Source == "" {
		return newError(ErrInvalid, "external id without a source platform")
	}
	if s.Source != "" && !s.Source.Valid() {
		return newError(ErrInvalid, "unknown source platform "+string(s.Source))
	}
	if s.Source == PlatformDiscord && s.ExternalID != "" && !IsSnowflake(s.ExternalID) {
		return ErrInvalidSnowflake
	}
	return nil
}
