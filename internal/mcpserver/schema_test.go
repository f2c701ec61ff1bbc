package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestToolSchemas pins what a client is told of get-thread-replies'
// arguments (thread_id required, each described), made by toolschema as
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
			"thread_id": {"type": "string", "description": "a weft thread id (UUID) or a Discord thread id (snowflake)"},
			"limit": {"type": "integer", "description": "replies per page: default 50, at most 200"},
			"cursor": {"type": "string", "description": "next_cursor of the previous page"},
			"order": {"type": "string", "description": "oldest (default) or newest"}
		},
		"required": ["thread_id"],
		"additionalProperties": false
	}`, schemas["get-thread-replies"])
}
