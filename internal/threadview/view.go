// Package threadview holds threads and stitches as the REST API and the
// MCP server show them, the thread listing and detail both answer with, and
// the opaque page cursors of every listing, so the surfaces answer alike.
package threadview

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Author is who wrote a message.
type Author struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	Bot  bool   `json:"bot"`
}

// Thread is a thread as the REST API and the MCP server show it.
type Thread struct {
	ID             uuid.UUID       `json:"id"`
	Type           thread.Type     `json:"type"`
	Goal           string          `json:"goal"`
	Status         thread.Status   `json:"status"`
	WaitingReason  string          `json:"waiting_reason,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          string          `json:"error,omitempty"`
	AgentName      string          `json:"agent_name"`
	StitchCount    int64           `json:"stitch_count"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	LastActivityAt time.Time       `json:"last_activity_at"`
	FinishedAt     *time.Time      `json:"finished_at,omitempty"`
}

// Of is t's view.
func Of(t *thread.Thread) Thread {
	v := Thread{
		ID: t.ID, Type: t.Type, Goal: t.Goal, Status: t.Status, WaitingReason: string(t.WaitingReason),
		Result: t.Result, Error: t.Error, AgentName: t.AgentName, StitchCount: t.StitchCount,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, LastActivityAt: t.LastActivityAt,
	}
	if !t.FinishedAt.IsZero() {
		at := t.FinishedAt
		v.FinishedAt = &at
	}
	return v
}

// Stitch is a stitch as the REST API shows it. The LLM request is left
// out: it repeats the whole conversation in every call, so a page of them
// would grow with the square of the thread's length.
type Stitch struct {
	ID          uuid.UUID         `json:"id"`
	Seq         int64             `json:"seq"`
	Type        thread.StitchType `json:"type"`
	Content     *string           `json:"content"` // null when deleted
	LLMResponse json.RawMessage   `json:"llm_response,omitempty"`
	Model       string            `json:"model,omitempty"`
	// Tokens and latency of an llm_call.
	InputTokens  int             `json:"input_tokens,omitempty"`
	OutputTokens int             `json:"output_tokens,omitempty"`
	LatencyMS    int64           `json:"latency_ms,omitempty"`
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolOutput   json.RawMessage `json:"tool_output,omitempty"`
	ToolError    bool            `json:"tool_error,omitempty"`
	Source       thread.Platform `json:"source,omitempty"`
	ExternalID   string          `json:"external_id,omitempty"`
	Author       *Author         `json:"author,omitempty"`
	EditedAt     *time.Time      `json:"edited_at,omitempty"`
	DeletedAt    *time.Time      `json:"deleted_at,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
}

// OfStitch is s's view.
func OfStitch(s *thread.Stitch) Stitch {
	v := Stitch{
		ID: s.ID, Seq: s.Seq, Type: s.Type, LLMResponse: s.LLMResponse, Model: s.Model,
		InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, LatencyMS: s.Latency.Milliseconds(),
		ToolName: s.ToolName, ToolInput: s.ToolInput, ToolOutput: s.ToolOutput, ToolError: s.ToolError,
		Source: s.Source, ExternalID: s.ExternalID, CreatedAt: s.CreatedAt,
	}
	if s.Author != nil {
		v.Author = &Author{ID: s.Author.ID, Name: s.Author.Name, Bot: s.Author.Bot}
	}
	if !s.EditedAt.IsZero() {
		at := s.EditedAt
		v.EditedAt = &at
	}
	if s.DeletedAt.IsZero() {
		text := s.Content
		v.Content = &text
	} else {
		at := s.DeletedAt
		v.DeletedAt = &at
	}
	return v
}
