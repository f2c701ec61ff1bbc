package migrations_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// An llm_call as weft stored it before 00014: Go's field names as keys.
const (
	oldRequest = `{"model":"m","system":"s","messages":[` +
		`{"Role":"user","Content":"hi","ToolCalls":null,"ToolCallID":""},` +
		`{"Role":"assistant","Content":"","ToolCalls":[{"ID":"c1","Name":"read","Arguments":{"label":"x"}}],"ToolCallID":""},` +
		`{"Role":"tool","Content":"done","ToolCalls":null,"ToolCallID":"c1"}],"tools":["read"]}`
	oldResponse = `{"content":"","tool_calls":[{"ID":"c2","Name":"write","Arguments":{"text":"y"}},` +
		`{"ID":"c3","Name":"read","Arguments":"not json the model sent"}],"stop_reason":"tool_use"}`
)

// goKey finds a key in Go's style: a capital first letter.
var goKey = regexp.MustCompile(`"[A-Z][A-Za-z]*":`)

func TestSnakeCaseJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	m, err := db.NewMigrator(store.Pool(), dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })

	_, err = m.DownTo(ctx, 13)
	require.NoError(t, err)
	th := dbtest.Thread(ctx, t, store, nil)
	call, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall,
		LLMRequest: json.RawMessage(oldRequest), LLMResponse: json.RawMessage(oldResponse)})
	require.NoError(t, err)
	// A row with no calls, and one of another type, stay as they are.
	plain, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall,
		LLMRequest: json.RawMessage(`{"model":"m","messages":[]}`), LLMResponse: json.RawMessage(`{"content":"ok"}`)})
	require.NoError(t, err)

	stored := func(id any) (req, resp string) {
		t.Helper()
		require.NoError(t, store.Pool().QueryRow(ctx,
			`SELECT llm_request::text, llm_response::text FROM stitches WHERE stitch_id = $1`, id).Scan(&req, &resp))
		return req, resp
	}
	jsonEq := func(want, got string) {
		t.Helper()
		require.JSONEq(t, want, got)
	}
	plainReq, plainResp := stored(plain.ID)

	_, err = m.Up(ctx)
	require.NoError(t, err)
	req, resp := stored(call.ID)
	require.NotRegexp(t, goKey, req)
	require.NotRegexp(t, goKey, resp)
	jsonEq(`{"content":"","tool_calls":[{"id":"c2","name":"write","arguments":{"text":"y"}},`+
		`{"id":"c3","name":"read","arguments":"not json the model sent"}],"stop_reason":"tool_use"}`, resp)

	// What it holds now reads as the Go types weft writes.
	var recorded struct {
		Messages []llm.Message `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(req), &recorded))
	require.Equal(t, []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"label": "x"}`)}}},
		{Role: llm.RoleTool, Content: "done", ToolCallID: "c1"},
	}, recorded.Messages)
	written, err := json.Marshal(llm.ToolCall{ID: "c2", Name: "write", Arguments: json.RawMessage(`{"text":"y"}`)})
	require.NoError(t, err)
	jsonEq(string(written), `{"id":"c2","name":"write","arguments":{"text":"y"}}`)

	gotReq, gotResp := stored(plain.ID)
	jsonEq(plainReq, gotReq)
	jsonEq(plainResp, gotResp)

	// Down restores the old keys exactly.
	_, err = m.DownTo(ctx, 13)
	require.NoError(t, err)
	req, resp = stored(call.ID)
	jsonEq(oldRequest, req)
	jsonEq(oldResponse, resp)
}
