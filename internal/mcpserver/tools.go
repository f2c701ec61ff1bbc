package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
	"github.com/weft-dev/weft/internal/toolschema"
)

// tools holds the handlers' dependencies.
type tools struct {
	store   Store
	replies RepliesGetter
	logger  *slog.Logger
}

// repliesArgs are get-thread-replies' arguments: a thread_id, or a Slack
// thread as get-thread-replies.md names it (channelId and threadTs).
type repliesArgs struct {
	ThreadID  string    `json:"thread_id,omitempty" jsonschema:"a weft thread id (UUID) or a Discord thread id (snowflake); or give channelId and threadTs"`
	ChannelID string    `json:"channelId,omitempty" jsonschema:"a Slack conversation id, with threadTs"`
	TeamID    string    `json:"teamId,omitempty" jsonschema:"the Slack workspace id (T…), with channelId; default: the channel's, as weft knows it"`
	ThreadTS  string    `json:"threadTs,omitempty" jsonschema:"the Slack thread's parent message ts, with channelId"`
	Limit     int       `json:"limit,omitempty" jsonschema:"replies per page: default 50, at most 200"`
	Cursor    string    `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
	Order     string    `json:"order,omitempty" jsonschema:"oldest (default) or newest" enum:"oldest,newest"`
	Requester requester `json:"requester,omitzero" jsonschema:"who asks, with channelId: a requester who is not a member of the channel is refused (AuthorizationError)"`
}

// requester is get-thread-replies.md's requester. Its token is not taken:
// a person's Slack token has no place in a tool's arguments.
type requester struct {
	UserID string `json:"userId" jsonschema:"the requester's Slack user id (U…)"`
}

// repliesSchema is get-thread-replies' input schema: its arguments, and
// what it requires, thread_id or else channelId and threadTs, so that a
// client trusting the schema cannot send {}. It is said with if/then/else
// and not, which every provider takes at a schema's root: Anthropic's API
// refuses anyOf, oneOf and allOf there, and clients hand an MCP tool's
// schema to their model as it is.
func repliesSchema() *jsonschema.Schema {
	var s jsonschema.Schema
	if err := json.Unmarshal(toolschema.For[repliesArgs](), &s); err != nil {
		panic(err)
	}
	s.If = &jsonschema.Schema{Required: []string{"thread_id"}}
	s.Then = &jsonschema.Schema{Not: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Required: []string{"channelId"}}, {Required: []string{"threadTs"}}}}}
	s.Else = &jsonschema.Schema{Required: []string{"channelId", "threadTs"}}
	return &s
}

// listArgs are list-threads' arguments.
type listArgs struct {
	Status       string `json:"status,omitempty" jsonschema:"pending, running, waiting, completed, failed or aborted"`
	Type         string `json:"type,omitempty" jsonschema:"autonomous or interactive"`
	Platform     string `json:"platform,omitempty" jsonschema:"discord, linear, slack or github: threads attached there"`
	UpdatedSince string `json:"updated_since,omitempty" jsonschema:"RFC 3339 time: threads updated since"`
	Limit        int    `json:"limit,omitempty" jsonschema:"threads per page: default 50, at most 200"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// getArgs are get-thread's arguments.
type getArgs struct {
	ThreadID string `json:"thread_id" jsonschema:"a weft thread id (UUID)"`
}

// searchArgs are search-threads' arguments.
type searchArgs struct {
	Query string `json:"query" jsonschema:"text to find in the threads' messages (case-insensitive substring)"`
	Limit int    `json:"limit,omitempty" jsonschema:"threads to return: default 20, at most 100"`
}

// searchHit is one thread search-threads found.
type searchHit struct {
	Thread  threadview.Thread `json:"thread"`
	Match   searchMatch       `json:"match"`
	Matches int               `json:"matches"`
}

// searchMatch is a thread's newest matching message.
type searchMatch struct {
	StitchID  uuid.UUID         `json:"stitch_id"`
	Seq       int64             `json:"seq"`
	Type      thread.StitchType `json:"type"`
	Text      string            `json:"text"`
	CreatedAt time.Time         `json:"created_at"`
}

// searchResult is search-threads' answer.
type searchResult struct {
	Results []searchHit `json:"results"`
}

// Search defaults: a page an agent can read at once.
const (
	defaultSearchLimit = 20
	maxMatchText       = 300
)

// outputSchema is the schema of T's JSON form, a tool's outputSchema: the
// SDK checks every answer against it, so it cannot drift from the type.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[uuid.UUID]():       {Type: "string"},
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %s: %v", reflect.TypeFor[T](), err))
	}
	return s
}

// repliesOutput is get-thread-replies' outputSchema: a thread named by
// thread_id answers as replies.Response (get-thread-replies.md's shape and
// more), a Slack thread as get-thread-replies.md's replies.SlackResponse.
func repliesOutput() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{outputSchema[replies.Response](), outputSchema[replies.SlackResponse]()}}
}

// register adds the tools, their input schemas made as the agent's tools'
// are (toolschema), not left to the SDK, and each its outputSchema.
func (t *tools) register(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:         "get-thread-replies",
		InputSchema:  repliesSchema(),
		OutputSchema: repliesOutput(),
		Description: "A thread's parent message and a page of its replies, with edited and deleted flags (deleted text is null). " +
			"Name it by thread_id, or a Slack thread by channelId and threadTs; either answers as {parent, replies, nextCursor, hasMore}, " +
			"each message with ts, user, text, edited, deleted and subtype. " +
			"Pass nextCursor back as cursor to read on.",
		Annotations: readOnly,
	}, t.getReplies)
	mcp.AddTool(s, &mcp.Tool{
		Name:         "list-threads",
		InputSchema:  toolschema.For[listArgs](),
		OutputSchema: outputSchema[threadview.Page](),
		Description:  "weft's threads, newest updated first, filtered by status, type, platform and update time.",
		Annotations:  readOnly,
	}, t.listThreads)
	mcp.AddTool(s, &mcp.Tool{
		Name:         "get-thread",
		InputSchema:  toolschema.For[getArgs](),
		OutputSchema: outputSchema[threadview.Detail](),
		Description:  "One thread: goal, status, result, and where it is attached (Discord thread, Linear session, Slack thread).",
		Annotations:  readOnly,
	}, t.getThread)
	mcp.AddTool(s, &mcp.Tool{
		Name:         "search-threads",
		InputSchema:  toolschema.For[searchArgs](),
		OutputSchema: outputSchema[searchResult](),
		Description:  "Threads whose messages contain the query, most recent match first, with the newest matching message.",
		Annotations:  readOnly,
	}, t.searchThreads)
}

// readOnly marks every tool: none changes anything.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

func (t *tools) getReplies(ctx context.Context, _ *mcp.CallToolRequest, in repliesArgs) (*mcp.CallToolResult, any, error) {
	switch slack := in.ChannelID != "" || in.ThreadTS != ""; {
	case slack && in.ThreadID != "":
		return toolError(httpapi.Invalid("give thread_id, or channelId and threadTs, not both")), nil, nil
	case slack:
		req := replies.SlackRequest{TeamID: in.TeamID, ChannelID: in.ChannelID, ThreadTS: in.ThreadTS,
			Limit: in.Limit, Cursor: in.Cursor, Order: replies.Order(in.Order)}
		req.RequesterID = in.Requester.UserID
		resp, err := t.replies.GetSlack(ctx, req)
		if err != nil {
			return toolError(httpapi.ErrorOf(err)), nil, nil
		}
		return nil, resp, nil
	case in.ThreadID == "":
		return toolError(httpapi.Invalid("thread_id, or channelId and threadTs, is required")), nil, nil
	case in.Requester != (requester{}):
		return toolError(httpapi.Invalid("requester applies to a Slack thread named by channelId and threadTs")), nil, nil
	}
	resp, err := t.replies.Get(ctx, replies.Request{ThreadID: in.ThreadID, Limit: in.Limit, Cursor: in.Cursor, Order: replies.Order(in.Order)})
	if err != nil {
		// The service logged it already.
		return toolError(httpapi.ErrorOf(err)), nil, nil
	}
	return nil, resp, nil
}

func (t *tools) listThreads(ctx context.Context, _ *mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, any, error) {
	q := threadview.Query{Status: thread.Status(in.Status), Type: thread.Type(in.Type), Platform: thread.Platform(in.Platform),
		Limit: in.Limit, Cursor: in.Cursor}
	if in.UpdatedSince != "" {
		since, err := time.Parse(time.RFC3339Nano, in.UpdatedSince)
		if err != nil {
			return t.fail(ctx, "list-threads", httpapi.Invalid("updated_since must be an RFC 3339 time")), nil, nil
		}
		q.UpdatedSince = since
	}
	list, err := threadview.List(ctx, t.store, q)
	if err != nil {
		return t.fail(ctx, "list-threads", err), nil, nil
	}
	return nil, list, nil
}

func (t *tools) getThread(ctx context.Context, _ *mcp.CallToolRequest, in getArgs) (*mcp.CallToolResult, any, error) {
	id, err := uuid.Parse(in.ThreadID)
	if err != nil {
		return t.fail(ctx, "get-thread", httpapi.Invalid("thread_id is not a weft thread id")), nil, nil
	}
	detail, err := threadview.Get(ctx, t.store, id)
	if err != nil {
		return t.fail(ctx, "get-thread", err), nil, nil
	}
	return nil, detail, nil
}

func (t *tools) searchThreads(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, any, error) {
	limit := in.Limit
	switch {
	case strings.TrimSpace(in.Query) == "":
		return t.fail(ctx, "search-threads", httpapi.Invalid("query must not be empty")), nil, nil
	case limit < 0 || limit > db.MaxSearchResults:
		return t.fail(ctx, "search-threads", httpapi.Invalid("limit must be between 0 and %d", db.MaxSearchResults)), nil, nil
	case limit == 0:
		limit = defaultSearchLimit
	}
	hits, err := t.store.SearchStitches(ctx, db.StitchSearch{Query: in.Query, Limit: limit})
	if err != nil {
		return t.fail(ctx, "search-threads", err), nil, nil
	}
	out := searchResult{Results: make([]searchHit, 0, len(hits))}
	for _, h := range hits {
		out.Results = append(out.Results, searchHit{
			Thread: threadview.Of(&h.Thread), Matches: h.Matches,
			Match: searchMatch{StitchID: h.Stitch.ID, Seq: h.Stitch.Seq, Type: h.Stitch.Type,
				Text: clip(h.Stitch.Content, maxMatchText), CreatedAt: h.Stitch.CreatedAt},
		})
	}
	return nil, out, nil
}

// fail is a tool error: the code and the safe message as JSON, the cause
// in the logs.
func (t *tools) fail(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	e := httpapi.ErrorOf(err)
	level := slog.LevelWarn
	if e.Code == httpapi.CodeInternal || e.Code == httpapi.CodeUnavailable {
		level = slog.LevelError
	}
	t.logger.Log(ctx, level, "mcp tool failed", slog.String("tool", tool), slog.String("code", string(e.Code)), slog.Any("error", err))
	return toolError(e)
}

// toolErrorBody is a tool error's text, as JSON.
type toolErrorBody struct {
	Code    httpapi.Code `json:"code"`
	Message string       `json:"message"`
}

// toolError is e as a tool error.
func toolError(e *httpapi.Error) *mcp.CallToolResult {
	body, _ := json.Marshal(toolErrorBody{e.Code, e.Message})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
}

// isToolError reports whether r is one toolError made.
func isToolError(r *mcp.CallToolResult) bool {
	if len(r.Content) != 1 {
		return false
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	var b toolErrorBody
	return ok && json.Unmarshal([]byte(tc.Text), &b) == nil && b.Code != ""
}

// clip cuts text to n runes.
func clip(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	return string([]rune(text)[:n-1]) + "…"
}
