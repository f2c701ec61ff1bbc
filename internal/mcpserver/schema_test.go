package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

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
			"cursor": {"type": "string", "description": "next_cursor (nextCursor for a Slack thread) of the previous page"},
			"order": {"type": "string", "description": "oldest (default) or newest"}
		},
		"additionalProperties": false
	}`, schemas["get-thread-replies"])
}
