package db

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// Mapping between the generated rows and parameters and the domain types:
// the domain's zero values are SQL NULL, so that dbsqlc never escapes this
// package. A mapper of rows takes the generated call's error as well, so it
// can wrap the call directly: threadOf(q.gen.Thread(ctx, id)).

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullUUID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func nullJSON(j json.RawMessage) []byte {
	if len(j) == 0 {
		return nil
	}
	return j
}

func nullInt(n int) *int32 {
	if n == 0 {
		return nil
	}
	n32 := int32(n)
	return &n32
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func tm(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func uid(u *uuid.UUID) uuid.UUID {
	if u == nil {
		return uuid.Nil
	}
	return *u
}

func num(n *int32) int {
	if n == nil {
		return 0
	}
	return int(*n)
}

// mapAll maps rows with one, or returns the generated call's error.
func mapAll[R, D any](rows []R, err error, one func(R, error) (*D, error)) ([]D, error) {
	if err != nil {
		return nil, translate(err)
	}
	var out []D
	for _, r := range rows {
		d, _ := one(r, nil)
		out = append(out, *d)
	}
	return out, nil
}

func threadOf(r dbsqlc.Thread, err error) (*thread.Thread, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &thread.Thread{
		ID:             r.ThreadID,
		Type:           thread.Type(r.ThreadType),
		Goal:           r.Goal,
		Status:         thread.Status(r.Status),
		WaitingReason:  thread.WaitingReason(str(r.WaitingReason)),
		Result:         r.Result,
		Error:          str(r.Error),
		AgentName:      r.AgentName,
		StitchCount:    r.StitchCount,
		HeadStitchID:   uid(r.HeadStitchID),
		LeaseOwner:     str(r.LeaseOwner),
		LeaseExpires:   tm(r.LeaseExpiresAt),
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
		LastActivityAt: r.LastActivityAt,
		FinishedAt:     tm(r.FinishedAt),
	}, nil
}

func stitchOf(r dbsqlc.Stitch, err error) (*thread.Stitch, error) {
	if err != nil {
		return nil, translate(err)
	}
	s := &thread.Stitch{
		ID:           r.StitchID,
		ThreadID:     r.ThreadID,
		PreviousID:   uid(r.PreviousStitchID),
		Seq:          r.Seq,
		Type:         thread.StitchType(r.StitchType),
		Content:      str(r.Content),
		LLMRequest:   r.LlmRequest,
		LLMResponse:  r.LlmResponse,
		Model:        str(r.Model),
		InputTokens:  num(r.InputTokens),
		OutputTokens: num(r.OutputTokens),
		Latency:      time.Duration(num(r.LatencyMs)) * time.Millisecond,
		ToolName:     str(r.ToolName),
		ToolInput:    r.ToolInput,
		ToolOutput:   r.ToolOutput,
		ToolError:    r.ToolError != nil && *r.ToolError,
		Metadata:     r.Metadata,
		Source:       thread.Platform(str(r.SourcePlatform)),
		ExternalID:   str(r.ExternalID),
		EditedAt:     tm(r.EditedAt),
		DeletedAt:    tm(r.DeletedAt),
		CreatedAt:    r.CreatedAt,
	}
	if r.AuthorID != nil || r.AuthorName != nil {
		s.Author = &thread.Author{ID: str(r.AuthorID), Name: str(r.AuthorName), Bot: r.AuthorIsBot != nil && *r.AuthorIsBot}
	}
	return s, nil
}

// appended is the stitch an append stored: its row, which leaves the JSON
// columns out, with the JSON it was given.
func appended(arg dbsqlc.AppendStitchParams, r dbsqlc.AppendStitchRow, err error) (*thread.Stitch, error) {
	r.LlmRequest, r.LlmResponse, r.ToolInput, r.ToolOutput, r.Metadata = arg.LlmRequest, arg.LlmResponse, arg.ToolInput, arg.ToolOutput, arg.Metadata
	return stitchOf(dbsqlc.Stitch(r), err)
}

// appendStitchParams are the arguments of s's append; insertStitchParams
// adds the position, for a stitch whose position the caller knows.
func appendStitchParams(s *thread.Stitch) dbsqlc.AppendStitchParams {
	p := dbsqlc.AppendStitchParams{
		StitchID:       s.ID,
		ThreadID:       s.ThreadID,
		StitchType:     string(s.Type),
		Content:        nullString(s.Content),
		LlmRequest:     nullJSON(s.LLMRequest),
		LlmResponse:    nullJSON(s.LLMResponse),
		Model:          nullString(s.Model),
		InputTokens:    nullInt(s.InputTokens),
		OutputTokens:   nullInt(s.OutputTokens),
		LatencyMs:      nullInt(int(s.Latency.Milliseconds())),
		ToolName:       nullString(s.ToolName),
		ToolInput:      nullJSON(s.ToolInput),
		ToolOutput:     nullJSON(s.ToolOutput),
		Metadata:       nullJSON(s.Metadata),
		SourcePlatform: nullString(string(s.Source)),
		ExternalID:     nullString(s.ExternalID),
		EditedAt:       nullTime(s.EditedAt),
		DeletedAt:      nullTime(s.DeletedAt),
	}
	if s.Author != nil {
		p.AuthorID, p.AuthorName, p.AuthorIsBot = nullString(s.Author.ID), nullString(s.Author.Name), &s.Author.Bot
	}
	if s.Type == thread.StitchToolCall {
		p.ToolError = &s.ToolError
	}
	return p
}

func insertStitchParams(s *thread.Stitch) dbsqlc.InsertStitchParams {
	p := appendStitchParams(s)
	return dbsqlc.InsertStitchParams{
		StitchID: p.StitchID, ThreadID: p.ThreadID, PreviousStitchID: nullUUID(s.PreviousID), Seq: s.Seq,
		StitchType: p.StitchType, Content: p.Content, LlmRequest: p.LlmRequest, LlmResponse: p.LlmResponse,
		Model: p.Model, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens, LatencyMs: p.LatencyMs,
		ToolName: p.ToolName, ToolInput: p.ToolInput, ToolOutput: p.ToolOutput, ToolError: p.ToolError,
		Metadata: p.Metadata, SourcePlatform: p.SourcePlatform, ExternalID: p.ExternalID,
		AuthorID: p.AuthorID, AuthorName: p.AuthorName, AuthorIsBot: p.AuthorIsBot,
		EditedAt: p.EditedAt, DeletedAt: p.DeletedAt,
	}
}

func outboxOf(r dbsqlc.Outbox, err error) (*thread.Outbox, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &thread.Outbox{
		ID:            r.DeliveryID,
		ThreadID:      r.ThreadID,
		StitchID:      uid(r.StitchID),
		Platform:      thread.Platform(r.Platform),
		Target:        r.Target,
		Kind:          thread.OutboxKind(r.Kind),
		Body:          r.Body,
		Status:        thread.OutboxStatus(r.Status),
		Attempts:      int(r.Attempts),
		NextAttemptAt: r.NextAttemptAt,
		LastError:     str(r.LastError),
		ExternalID:    str(r.ExternalID),
		CreatedAt:     r.CreatedAt,
		SentAt:        tm(r.SentAt),
	}, nil
}

func discordOf(r dbsqlc.DiscordAttachment, err error) (*thread.DiscordAttachment, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &thread.DiscordAttachment{
		ThreadID:        r.ThreadID,
		DiscordThreadID: r.DiscordThreadID,
		ChannelID:       r.ChannelID,
		GuildID:         r.GuildID,
		CreatedBy:       r.CreatedBy,
		ThreadName:      r.ThreadName,
		LastMessageID:   str(r.LastMessageID),
		Active:          r.IsActive,
		CreatedAt:       r.CreatedAt,
		UpdatedAt:       r.UpdatedAt,
	}, nil
}

func linearOf(r dbsqlc.LinearAttachment, err error) (*thread.LinearAttachment, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &thread.LinearAttachment{
		ThreadID:        r.ThreadID,
		SessionID:       r.SessionID,
		WorkspaceID:     r.WorkspaceID,
		IssueID:         str(r.IssueID),
		IssueIdentifier: str(r.IssueIdentifier),
		IssueTitle:      str(r.IssueTitle),
		ProjectID:       str(r.ProjectID),
		TeamID:          str(r.TeamID),
		CommentID:       str(r.CommentID),
		CreatedByUserID: r.CreatedByUserID,
		SessionStatus:   thread.SessionStatus(r.SessionStatus),
		Active:          r.IsActive,
		LastActivityAt:  r.LastActivityAt,
		CreatedAt:       r.CreatedAt,
		UpdatedAt:       r.UpdatedAt,
	}, nil
}
