package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestToolSchemas pins what a client is told of get-thread-replies'
// arguments (thread_id, or a Slack thread's channelId and threadTs; each described), made by toolschema as
// the agent's tools are.
func TestToolSchemas(t *testing.T) {
	t.Parallel()
	s, _ := newServer(t)
	cs := connectInMemory(t, s)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	schemas := map[string]string{}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		schemas[tool.Name] = string(b)
	}
	require.Len(t, schemas, 4)
	require.JSONEq(t, `{
		"type": "object",
		"properties": {
			"thread_id": {"type": "string", "description": "a weft thread id (UUID) or a Discord thread id (snowflake); or give channelId and threadTs"},
			"channelId": {"type": "string", "description": "a Slack conversation id, with threadTs"},
			"threadTs": {"type": "string", "description": "the Slack thread's parent message ts, with channelId"},
			"teamId": {"type": "string", "description": "the Slack workspace id (T…), with channelId; default: the channel's, as weft knows it"},
			"limit": {"type": "integer", "description": "replies per page: default 50, at most 200"},
			"cursor": {"type": "string", "description": "nextCursor of the previous page"},
			"order": {"type": "string", "description": "oldest (default) or newest", "enum": ["oldest", "newest"]},
			"requester": {"type": "object", "description": "who asks, with channelId: a requester who is not a member of the channel is refused (AuthorizationError)",
				"properties": {"userId": {"type": "string", "description": "the requester's Slack user id (U…)"}},
				"required": ["userId"], "additionalProperties": false}
		},
		"additionalProperties": false,
		"if": {"required": ["thread_id"]},
		"then": {"not": {"anyOf": [{"required": ["channelId"]}, {"required": ["threadTs"]}]}},
		"else": {"required": ["channelId", "threadTs"]}
	}`, schemas["get-thread-replies"])
}

// TestRepliesSchemaSaysWhatIsRequired: a client that validates its
// arguments against get-thread-replies' schema, as it is listed, learns
// that {} is not enough, before calling; and the schema keeps anyOf,
// oneOf and allOf off its root, which Anthropic's API refuses.
func TestRepliesSchemaSaysWhatIsRequired(t *testing.T) {
	t.Parallel()
	s, _ := newServer(t)
	cs := connectInMemory(t, s)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var raw []byte
	for _, tool := range list.Tools {
		if tool.Name == "get-thread-replies" {
			raw, err = json.Marshal(tool.InputSchema)
			require.NoError(t, err)
		}
	}
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		require.NotContains(t, root, k)
	}
	var schema jsonschema.Schema
	require.NoError(t, json.Unmarshal(raw, &schema))
	resolved, err := schema.Resolve(nil)
	require.NoError(t, err)
	tests := []struct {
		name string
		args map[string]any
		ok   bool
	}{
		{"Empty", map[string]any{}, false},
		{"OnlyAPage", map[string]any{"limit": 5}, false},
		{"ThreadID", map[string]any{"thread_id": "x"}, true},
		{"SlackThread", map[string]any{"channelId": "C1", "threadTs": "1.2"}, true},
		{"ChannelAlone", map[string]any{"channelId": "C1"}, false},
		{"Both", map[string]any{"thread_id": "x", "channelId": "C1", "threadTs": "1.2"}, false},
		{"BadOrder", map[string]any{"thread_id": "x", "order": "up"}, false},
	}
	for _, tc := range tests {
		err := resolved.Validate(tc.args)
		require.Equal(t, tc.ok, err == nil, "%s: %v", tc.name, err)
	}
	// The server holds to it too.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get-thread-replies", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.IsError)
}

// TestEveryToolDeclaresOutputSchema: every tool says what it answers (the
// SDK checks each answer against it; the other tests call every tool).
func TestEveryToolDeclaresOutputSchema(t *testing.T) {
	t.Parallel()
	s, _ := newServer(t)
	cs := connectInMemory(t, s)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, 4)
	for _, tool := range list.Tools {
		require.NotNil(t, tool.OutputSchema, tool.Name)
		raw, err := json.Marshal(tool.OutputSchema)
		require.NoError(t, err)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(raw, &schema))
		require.Equal(t, "object", schema["type"], tool.Name)
	}
}
