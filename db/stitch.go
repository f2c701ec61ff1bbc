package db

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

const stitchColumns = `stitch_id, thread_id, previous_stitch_id, seq, stitch_type, content,
	llm_request, llm_response, model, input_tokens, output_tokens, latency_ms,
	tool_name, tool_input, tool_output, tool_error, metadata,
	source_platform, external_id, author_id, author_name, author_is_bot,
	edited_at, deleted_at, created_at`

func scanStitch(row pgx.Row) (*thread.Stitch, error) {
	var (
		s                                      thread.Stitch
		prev                                   pgtype.UUID
		content, model, toolName, source, ext  pgtype.Text
		authorID, authorName                   pgtype.Text
		inTok, outTok, latency                 pgtype.Int4
		toolErr, authorBot                     pgtype.Bool
		edited, deleted                        pgtype.Timestamptz
		llmReq, llmResp, toolIn, toolOut, meta []byte
	)
	err := row.Scan(&s.ID, &s.ThreadID, &prev, &s.Seq, &s.Type, &content,
		&llmReq, &llmResp, &model, &inTok, &outTok, &latency,
		&toolName, &toolIn, &toolOut, &toolErr, &meta,
		&source, &ext, &authorID, &authorName, &authorBot,
		&edited, &deleted, &s.CreatedAt)
	if err != nil {
		return nil, translate(err)
	}
	s.PreviousID = uid(prev)
	s.Content, s.Model, s.ToolName = str(content), str(model), str(toolName)
	s.LLMRequest, s.LLMResponse, s.ToolInput, s.ToolOutput, s.Metadata = llmReq, llmResp, toolIn, toolOut, meta
	s.InputTokens, s.OutputTokens = int(inTok.Int32), int(outTok.Int32)
	s.Latency = millis(int(latency.Int32))
	s.ToolError = toolErr.Bool
	s.Source, s.ExternalID = thread.Platform(source.String), str(ext)
	if authorID.Valid || authorName.Valid {
		s.Author = &thread.Author{ID: str(authorID), Name: str(authorName), Bot: authorBot.Bool}
	}
	s.EditedAt, s.DeletedAt = tm(edited), tm(deleted)
	return &s, nil
}

// stitchArgs are the insert arguments $3.. of a stitch, shared by the append
// and the batch insert so the two cannot drift apart.
func stitchArgs(s *thread.Stitch) []any {
	var authorID, authorName *string
	var authorBot *bool
	if s.Author != nil {
		authorID, authorName, authorBot = nullString(s.Author.ID), nullString(s.Author.Name), &s.Author.Bot
	}
	var toolErr *bool
	if s.Type == thread.StitchToolCall {
		toolErr = &s.ToolError
	}
	return []any{
		s.Type, nullString(s.Content),
		nullJSON(s.LLMRequest), nullJSON(s.LLMResponse), nullString(s.Model),
		nullInt(s.InputTokens), nullInt(s.OutputTokens), nullInt(int(s.Latency.Milliseconds())),
		nullString(s.ToolName), nullJSON(s.ToolInput), nullJSON(s.ToolOutput), toolErr, nullJSON(s.Metadata),
		nullString(string(s.Source)), nullString(s.ExternalID), authorID, authorName, authorBot,
		nullTime(s.EditedAt), nullTime(s.DeletedAt),
	}
}

const stitchInsertColumns = `stitch_type, content, llm_request, llm_response, model,
	input_tokens, output_tokens, latency_ms, tool_name, tool_input, tool_output, tool_error, metadata,
	source_platform, external_id, author_id, author_name, author_is_bot, edited_at, deleted_at`

// The placeholders of stitchArgs: after id, thread, previous and seq in a
// batch insert ($5 on), after id and thread in an append ($3 on).
const (
	stitchValuesFrom5 = `$5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24`
	stitchValuesFrom3 = `$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22`
)

// queueInsertStitch adds a stitch whose position the caller already knows
// (a new thread's first stitches) to a batch.
func queueInsertStitch(b *pgx.Batch, s *thread.Stitch) {
	args := append([]any{s.ID, s.ThreadID, nullUUID(s.PreviousID), s.Seq}, stitchArgs(s)...)
	b.Queue(`INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, `+stitchInsertColumns+`)
		VALUES ($1, $2, $3, $4, `+stitchValuesFrom5+`)`, args...)
}

// appendStitchSQL appends a stitch at the head of its thread's chain in one
// statement. The first CTE locks the thread row (FOR UPDATE re-reads the row
// as last committed, even when it had to wait), so concurrent appends to one
// thread queue on that lock and each sees its predecessor's head and count.
const appendStitchSQL = `
WITH head AS (
	SELECT thread_id, head_stitch_id, stitch_count FROM threads WHERE thread_id = $2 FOR UPDATE
), moved AS (
	UPDATE threads t SET head_stitch_id = $1, stitch_count = head.stitch_count + 1,
		last_activity_at = now(), updated_at = now()
	FROM head WHERE t.thread_id = head.thread_id
	RETURNING head.head_stitch_id AS previous, head.stitch_count + 1 AS seq
)
INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, ` + stitchInsertColumns + `)
SELECT $1, $2, moved.previous, moved.seq, ` + stitchValuesFrom3 + ` FROM moved
RETURNING ` + stitchColumns

// AppendStitch adds s at the end of its thread's chain and returns it with
// its id, position and predecessor filled in. It is safe under concurrency:
// appends to one thread are serialized by the thread row's lock, so the chain
// never forks. A stitch whose (Source, ExternalID) is already stored fails
// with thread.ErrDuplicateExternalID; an unknown thread with
// thread.ErrNotFound.
func (q *Queries) AppendStitch(ctx context.Context, s thread.Stitch) (*thread.Stitch, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.ID == uuid.Nil {
		s.ID = thread.NewID()
	}
	args := append([]any{s.ID, s.ThreadID}, stitchArgs(&s)...)
	// One statement, one row lock taken first: under READ COMMITTED it
	// cannot deadlock or fail to serialize, so there is nothing to retry.
	out, err := scanStitch(q.db.QueryRow(ctx, appendStitchSQL, args...))
	if err != nil {
		return nil, fmt.Errorf("append stitch: %w", err)
	}
	return out, nil
}

// StitchPage selects a window of a thread's stitches by position. After and
// Before are exclusive bounds on Seq (0: unbounded). Newest reads backwards
// from the end; the result is always in chain order.
type StitchPage struct {
	After  int64
	Before int64
	Limit  int
	Newest bool
}

// MaxStitchPage bounds one read of a thread's stitches.
const MaxStitchPage = 1000

// Stitches reads a window of a thread's stitches, in chain order.
func (q *Queries) Stitches(ctx context.Context, threadID uuid.UUID, p StitchPage) ([]thread.Stitch, error) {
	out, err := q.stitchWindow(ctx, threadID, p, "true")
	if err != nil {
		return nil, fmt.Errorf("read stitches: %w", err)
	}
	if p.Newest {
		slices.Reverse(out)
	}
	return out, nil
}

// stitchWindow reads the stitches of a window that match where, in the
// order the window reads (newest first when p.Newest). The (thread_id, seq)
// unique index serves the range and the order; where filters within it.
func (q *Queries) stitchWindow(ctx context.Context, threadID uuid.UUID, p StitchPage, where string) ([]thread.Stitch, error) {
	if p.Limit <= 0 || p.Limit > MaxStitchPage {
		p.Limit = MaxStitchPage
	}
	order := "ASC"
	if p.Newest {
		order = "DESC"
	}
	rows, err := q.db.Query(ctx, stitchWindowSQL(where, order), threadID, p.After, p.Before, p.Limit)
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanStitch)
}

// stitchWindowSQL selects a thread's stitches ($1) with seq after $2 and
// before $3 (0: unbounded) that match where, in order, at most $4.
func stitchWindowSQL(where, order string) string {
	return `SELECT ` + stitchColumns + ` FROM stitches
		WHERE thread_id = $1 AND ($2 = 0 OR seq > $2) AND ($3 = 0 OR seq < $3) AND ` + where + `
		ORDER BY seq ` + order + ` LIMIT $4`
}

// Stitch returns one stitch by id.
func (q *Queries) Stitch(ctx context.Context, id uuid.UUID) (*thread.Stitch, error) {
	s, err := scanStitch(q.db.QueryRow(ctx, `SELECT `+stitchColumns+` FROM stitches WHERE stitch_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get stitch %s: %w", id, err)
	}
	return s, nil
}

// StitchByExternalID returns the stitch a platform event became.
func (q *Queries) StitchByExternalID(ctx context.Context, source thread.Platform, externalID string) (*thread.Stitch, error) {
	s, err := scanStitch(q.db.QueryRow(ctx, `
		SELECT `+stitchColumns+` FROM stitches WHERE source_platform = $1 AND external_id = $2`, source, externalID))
	if err != nil {
		return nil, fmt.Errorf("stitch by external id: %w", err)
	}
	return s, nil
}

// StitchEdit is a platform's edit or delete of a message already stored.
type StitchEdit struct {
	Content   string
	EditedAt  time.Time // set for an edit
	DeletedAt time.Time // set for a delete
}

// EditStitch records an edit or delete of the stitch a platform event became:
// the latest text, and when. It never touches the chain.
func (q *Queries) EditStitch(ctx context.Context, source thread.Platform, externalID string, e StitchEdit) (*thread.Stitch, error) {
	s, err := scanStitch(q.db.QueryRow(ctx, `
		UPDATE stitches SET
			content = CASE WHEN $4::timestamptz IS NULL THEN $3 ELSE content END,
			edited_at = coalesce($5, edited_at),
			deleted_at = coalesce($4, deleted_at)
		WHERE source_platform = $1 AND external_id = $2
		RETURNING `+stitchColumns, source, externalID, e.Content, nullTime(e.DeletedAt), nullTime(e.EditedAt)))
	if err != nil {
		return nil, fmt.Errorf("edit stitch: %w", err)
	}
	return s, nil
}

// InputSurface returns where the thread's newest input came from, which is
// where its answer goes: the platform and, on it, the Linear session or
// the Discord thread that is still attached. A thread whose newest input
// came from no platform, or from one it is no longer attached on (an
// archived Discord thread), returns "".
func (q *Queries) InputSurface(ctx context.Context, threadID uuid.UUID) (thread.Platform, string, error) {
	p, target, err := scanInputSurface(q.db.QueryRow(ctx, inputSurfaceSQL, threadID))
	if err != nil {
		return "", "", fmt.Errorf("input surface: %w", err)
	}
	return p, target, nil
}

const inputSurfaceSQL = `
	SELECT s.source_platform, l.session_id, d.discord_thread_id, d.is_active
	FROM (SELECT source_platform FROM stitches
	      WHERE thread_id = $1 AND stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity')
	      ORDER BY seq DESC LIMIT 1) s
	LEFT JOIN linear_thread_metadata l ON l.thread_id = $1
	LEFT JOIN discord_thread_metadata d ON d.thread_id = $1`

func scanInputSurface(row pgx.Row) (thread.Platform, string, error) {
	var src, session, channel *string
	var active *bool
	if err := row.Scan(&src, &session, &channel, &active); err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return "", "", nil
		}
		return "", "", err
	}
	switch {
	case src == nil:
	case thread.Platform(*src) == thread.PlatformLinear && session != nil:
		return thread.PlatformLinear, *session, nil
	case thread.Platform(*src) == thread.PlatformDiscord && channel != nil && active != nil && *active:
		return thread.PlatformDiscord, *channel, nil
	}
	return "", "", nil
}
