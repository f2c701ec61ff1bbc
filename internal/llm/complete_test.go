package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
)

func TestCompleteText(t *testing.T) {
	t.Parallel()
	wantStop := map[string]string{openAIName: "stop", anthropicName: "end_turn"}
	for _, provider := range providers() {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			f.srv.Enqueue(llmtest.Reply{Text: "hello there", InputTokens: 12, OutputTokens: 3})

			req := hello()
			req.System = "be brief"
			resp, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, &Response{
				Content:    "hello there",
				Model:      "test-model",
				StopReason: wantStop[provider],
				Usage:      Usage{InputTokens: 12, OutputTokens: 3},
			}, resp)

			got := f.srv.Requests()
			require.Len(t, got, 1)
			require.Equal(t, provider, got[0].Protocol)
			require.Equal(t, "test-model", got[0].Model)
			require.Equal(t, "be brief", got[0].System)
			require.Equal(t, []llmtest.Message{{Role: "user", Content: "hi"}}, got[0].Messages)
			require.Equal(t, defaultMaxTokens, got[0].MaxTokens)
			require.Equal(t, "test-key", got[0].APIKey)
		})
	}
}

func TestCompleteToolRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider  string
		wantStop  string
		wireRoles []string // roles of the follow-up request as sent
	}{
		{openAIName, "tool_calls", []string{"system", "user", "assistant", "tool", "tool"}},
		// Both tool results travel in one user message, as Anthropic requires.
		{anthropicName, "tool_use", []string{"user", "assistant", "user"}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, tt.provider)
			f.srv.Enqueue(
				llmtest.Reply{Text: "let me look", ToolCalls: []llmtest.ToolCall{
					{Name: "search", Arguments: `{"q":"weft"}`},
					{ID: "given-id", Name: "history"},
				}},
				llmtest.Reply{Text: "found it"},
			)
			req := hello()
			req.System = "use tools"
			req.Tools = []ToolSpec{
				{Name: "search", Description: "search threads", Parameters: json.RawMessage(
					`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)},
				{Name: "history"}, // no parameters at all
			}

			first, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, tt.wantStop, first.StopReason)
			require.Equal(t, "let me look", first.Content)
			require.Len(t, first.ToolCalls, 2)
			require.NotEmpty(t, first.ToolCalls[0].ID)
			require.Equal(t, "search", first.ToolCalls[0].Name)
			require.JSONEq(t, `{"q":"weft"}`, string(first.ToolCalls[0].Arguments))
			require.Equal(t, ToolCall{ID: "given-id", Name: "history", Arguments: json.RawMessage("{}")}, first.ToolCalls[1])

			req.Messages = append(req.Messages,
				Message{Role: RoleAssistant, Content: first.Content, ToolCalls: first.ToolCalls},
				Message{Role: RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: "3 threads"},
				Message{Role: RoleTool, ToolCallID: "given-id", Content: "no history"},
			)
			second, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, "found it", second.Content)
			require.Empty(t, second.ToolCalls)

			got := f.srv.Requests()
			require.Len(t, got, 2)
			require.Equal(t, []string{"search", "history"}, got[0].Tools)
			require.Equal(t, []string{"search", "history"}, got[1].Tools)
			require.Equal(t, "use tools", got[1].System)
			require.Equal(t, []llmtest.Message{
				{Role: "user", Content: "hi"},
				{Role: "assistant", Content: "let me look", ToolCalls: []llmtest.ToolCall{
					{ID: first.ToolCalls[0].ID, Name: "search", Arguments: `{"q":"weft"}`},
					{ID: "given-id", Name: "history", Arguments: "{}"},
				}},
				{Role: "tool", ToolCallID: first.ToolCalls[0].ID, Content: "3 threads"},
				{Role: "tool", ToolCallID: "given-id", Content: "no history"},
			}, got[1].Messages)
			require.Equal(t, tt.wireRoles, wireRoles(t, got[1].Body))
		})
	}
}

// TestCompleteBadToolArguments checks that arguments a model got wrong still
// make a Response that marshals, and that the tool can see what came.
func TestCompleteBadToolArguments(t *testing.T) {
	t.Parallel()
	for _, provider := range providers() {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "search", Arguments: `{"q":`}}})

			resp, err := f.p.Complete(t.Context(), hello())
			require.NoError(t, err)
			require.Len(t, resp.ToolCalls, 1)
			require.JSONEq(t, `"{\"q\":"`, string(resp.ToolCalls[0].Arguments))
			_, err = json.Marshal(resp)
			require.NoError(t, err)
		})
	}
}

func TestCompleteBadToolSchemaIsNotSent(t *testing.T) {
	t.Parallel()
	for _, provider := range providers() {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			req := hello()
			req.Tools = []ToolSpec{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}

			resp, err := f.p.Complete(t.Context(), req)
			require.Nil(t, resp)
			requireError(t, err, provider, KindBadRequest)
			require.False(t, IsRetryable(err))
			require.Zero(t, f.srv.Calls())
		})
	}
}

// wireRoles lists the roles of the messages in a request body as sent.
func wireRoles(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	roles := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		roles[i] = m.Role
	}
	return roles
}

// TestCompleteEmptyTurns checks that an empty turn in the history (a model
// may answer with nothing) does not make every later call a 400.
func TestCompleteEmptyTurns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider string
		want     []llmtest.Message
	}{
		{openAIName, []llmtest.Message{{Role: "user", Content: "hi"}, {Role: "assistant"}, {Role: "user", Content: "still there?"}}},
		// Anthropic rejects empty text blocks: the turn is dropped and the
		// two user turns travel as one message.
		{anthropicName, []llmtest.Message{{Role: "user", Content: "hi\nstill there?"}}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, tt.provider)
			req := hello()
			req.Messages = append(req.Messages, Message{Role: RoleAssistant}, Message{Role: RoleUser, Content: "still there?"})

			_, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, tt.want, f.srv.Requests()[0].Messages)
		})
	}
}

// TestCompleteImages sends a user message with pictures through each
// adapter: the fake, reading the wire as the provider does, gets the text
// and every image's bytes and media type; the stored JSON of the message
// names the images without their bytes.
func TestCompleteImages(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	jpg := []byte{0xff, 0xd8, 0xff, 0xe0}
	for _, provider := range []string{openAIName, anthropicName} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			req := Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "what is in these?",
				Images: []Image{{MediaType: "image/png", Data: png, Name: "a.png"}, {MediaType: "image/jpeg", Data: jpg}}}}}
			_, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			got := f.srv.Requests()[0].Messages
			require.Equal(t, []llmtest.Message{{Role: "user", Content: "what is in these?",
				Images: []llmtest.Image{{MediaType: "image/png", Data: png}, {MediaType: "image/jpeg", Data: jpg}}}}, got)
		})
	}
	stored, err := json.Marshal(Message{Role: RoleUser, Content: "x", Images: []Image{{MediaType: "image/png", Name: "a.png", Data: png, Size: len(png)}}})
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"user","content":"x","images":[{"media_type":"image/png","name":"a.png","size":12}]}`, string(stored))
}

// TestCompleteToolResultImages sends the pictures a tool returned through
// each adapter, and checks what the fake, reading the wire as the provider
// does, got: Anthropic takes them in the tool_result; a chat completion's
// tool message takes only text (the fake refuses an image there, as
// OpenAI does), so they follow the results in one user message.
func TestCompleteToolResultImages(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nchart")
	gif := []byte("GIF89a")
	req := Request{Model: "m", Messages: []Message{
		{Role: RoleUser, Content: "draw it"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "draw", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "read", Arguments: json.RawMessage(`{}`)}, {ID: "c3", Name: "draw", Arguments: json.RawMessage(`{}`)}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "a chart\n[image image/png, 13 bytes, attached]", Images: []Image{{MediaType: "image/png", Data: png}}},
		{Role: RoleTool, ToolCallID: "c2", Content: "plain"},
		{Role: RoleTool, ToolCallID: "c3", Content: "[image image/gif, 6 bytes, attached]", Images: []Image{{MediaType: "image/gif", Data: gif}}},
		{Role: RoleUser, Content: "and now?"},
	}}
	want := map[string][]llmtest.Message{
		anthropicName: {
			{Role: "user", Content: "draw it"},
			{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "draw", Arguments: `{}`}, {ID: "c2", Name: "read", Arguments: `{}`}, {ID: "c3", Name: "draw", Arguments: `{}`}}},
			{Role: "tool", ToolCallID: "c1", Content: "a chart\n[image image/png, 13 bytes, attached]", Images: []llmtest.Image{{MediaType: "image/png", Data: png}}},
			{Role: "tool", ToolCallID: "c2", Content: "plain"},
			{Role: "tool", ToolCallID: "c3", Content: "[image image/gif, 6 bytes, attached]", Images: []llmtest.Image{{MediaType: "image/gif", Data: gif}}},
			{Role: "user", Content: "and now?"},
		},
		openAIName: {
			{Role: "user", Content: "draw it"},
			{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "draw", Arguments: `{}`}, {ID: "c2", Name: "read", Arguments: `{}`}, {ID: "c3", Name: "draw", Arguments: `{}`}}},
			{Role: "tool", ToolCallID: "c1", Content: "a chart\n[image image/png, 13 bytes, attached]"},
			{Role: "tool", ToolCallID: "c2", Content: "plain"},
			{Role: "tool", ToolCallID: "c3", Content: "[image image/gif, 6 bytes, attached]"},
			{Role: "user", Content: toolImagesText, Images: []llmtest.Image{{MediaType: "image/png", Data: png}, {MediaType: "image/gif", Data: gif}}},
			{Role: "user", Content: "and now?"},
		},
	}
	for _, provider := range []string{openAIName, anthropicName} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			_, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, want[provider], f.srv.Requests()[0].Messages)
		})
	}
}

// A tool that takes no arguments, {"type":"object"} as MCP servers send
// it, reaches either provider with an object schema: Anthropic's API
// refuses a tool without one.
func TestToolWithoutProperties(t *testing.T) {
	t.Parallel()
	for _, provider := range providers() {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := setup(t, provider)
			req := hello()
			req.Tools = []ToolSpec{{Name: "ping", Parameters: json.RawMessage(`{"type":"object"}`)}}
			_, err := f.p.Complete(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, []string{"ping"}, f.srv.Requests()[0].Tools)
		})
	}
}
