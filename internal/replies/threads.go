package replies

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// ThreadView is a thread as the REST API and the MCP server show it.
type ThreadView struct {
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

// ViewThread is t's view.
func ViewThread(t *thread.Thread) ThreadView {
	v := ThreadView{
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

// StitchView is a stitch as the REST API shows it. The LLM request is left
// out: it repeats the whole conversation in every call, so a page of them
// would grow with the square of the thread's length.
type StitchView struct {
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

// ViewStitch is s's view.
func ViewStitch(s *thread.Stitch) StitchView {
	v := StitchView{
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

// ThreadLister lists threads. *db.Store implements it.
type ThreadLister interface {
	ListThreads(ctx context.Context, f db.ThreadFilter) ([]thread.Thread, error)
}

// ThreadQuery is a listing's filters and page. Zero fields do not filter.
type ThreadQuery struct {
	Status       thread.Status
	Type         thread.Type
	Platform     thread.Platform // discord or linear
	UpdatedSince time.Time
	Limit        int // 0: DefaultLimit; above MaxLimit: InvalidArgument
	Cursor       string
}

// ThreadList is one page of a listing, newest updated first.
type ThreadList struct {
	Threads    []ThreadView `json:"threads"`
	NextCursor string       `json:"next_cursor,omitempty"`
	HasMore    bool         `json:"has_more"`
}

// threadCursor is where a listing's page ended.
type threadCursor struct {
	Updated time.Time `json:"u"`
	ID      uuid.UUID `json:"i"`
}

// ListThreads lists threads for the REST API and the MCP server. Bad
// filters are InvalidArgument errors.
func ListThreads(ctx context.Context, store ThreadLister, q ThreadQuery) (*ThreadList, error) {
	switch {
	case q.Status != "" && !q.Status.Valid():
		return nil, invalid("unknown status %q", q.Status)
	case q.Type != "" && !q.Type.Valid():
		return nil, invalid("unknown thread type %q", q.Type)
	case q.Platform != "" && q.Platform != thread.PlatformDiscord && q.Platform != thread.PlatformLinear:
		return nil, invalid("platform must be discord or linear")
	}
	limit, err := PageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	// A cursor pages one listing: the same filters.
	scope := fmt.Sprintf("%s %s %s %s", q.Status, q.Type, q.Platform, q.UpdatedSince.Format(time.RFC3339Nano))
	f := db.ThreadFilter{Status: q.Status, Type: q.Type, Platform: q.Platform, UpdatedSince: q.UpdatedSince, Limit: limit + 1}
	if q.Cursor != "" {
		var c threadCursor
		if err := DecodeCursor(q.Cursor, CursorThreads, scope, &c); err != nil {
			return nil, err
		}
		if c.Updated.IsZero() {
			return nil, invalid("cursor is not one this API returned")
		}
		f.AfterUpdated, f.AfterID = c.Updated, c.ID
	}
	threads, err := store.ListThreads(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &ThreadList{Threads: make([]ThreadView, 0, min(len(threads), limit))}
	if len(threads) > limit {
		threads = threads[:limit]
		last := threads[limit-1]
		out.HasMore, out.NextCursor = true, EncodeCursor(CursorThreads, scope, threadCursor{Updated: last.UpdatedAt, ID: last.ID})
	}
	for i := range threads {
		out.Threads = append(out.Threads, ViewThread(&threads[i]))
	}
	return out, nil
}
