package llm

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"
)

// TestOpenAIBodyMatchesSDK encodes requests of every shape the runner
// makes and checks the JSON is the SDK's for the same request: the adapter
// encodes its requests itself (openAIRequestBody) for their cost, not to
// send anything else.
func TestOpenAIBodyMatchesSDK(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","description":"a label"}},"required":["label"]}`)
	tests := []struct {
		name   string
		req    Request
		stream bool
	}{
		{name: "user only", req: Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "hello"}}}},
		{name: "system, max tokens, streamed", stream: true,
			req: Request{Model: "m", System: "be brief", MaxTokens: 77, Messages: []Message{{Role: RoleUser, Content: "hi"}}}},
		{name: "user with images", req: Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "what is this?",
			Images: []Image{{MediaType: "image/png", Data: []byte("\x89PNG")}, {MediaType: "image/jpeg", Data: []byte{0xff, 0xd8}}}}}}},
		{name: "empty user text", req: Request{Model: "m", Messages: []Message{{Role: RoleUser}}}},
		{name: "a tool round", stream: true, req: Request{Model: "gpt", System: "sys\n\n<ctx>\"quoted\" & <tags></ctx>",
			Messages: []Message{
				{Role: RoleUser, Content: "read my memory"},
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_memory", Arguments: json.RawMessage(`{"label":"bench"}`)},
					{ID: "c2", Name: "other"}}},
				{Role: RoleTool, Content: "No memory saved yet.", ToolCallID: "c1"},
				{Role: RoleTool, Content: "ok", ToolCallID: "c2"},
				{Role: RoleAssistant, Content: "thinking aloud", ToolCalls: []ToolCall{{ID: "c3", Name: "x", Arguments: json.RawMessage(`"not json"`)}}},
				{Role: RoleTool, Content: "done", ToolCallID: "c3"},
				{Role: RoleAssistant, Content: "an answer"},
				{Role: RoleAssistant},
				{Role: RoleSystem, Content: "a note"},
				{Role: RoleUser, Content: "ünïcode ✓ \u2028"},
			},
			Tools: []ToolSpec{{Name: "read_memory", Description: "Read memory.", Parameters: schema},
				{Name: "bare"}, {Name: "no_description", Parameters: json.RawMessage(` { "type" : "object" } `)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := openAIRequestBody(tt.req, tt.stream)
			require.NoError(t, err)
			params, err := sdkParams(tt.req)
			require.NoError(t, err)
			if tt.stream {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			want, err := json.Marshal(params)
			require.NoError(t, err)
			require.JSONEq(t, string(want), string(got))
		})
	}
}

// TestOpenAIBodyRefuses refuses what the SDK's structs refused: a role
// chat completions do not have, a tool whose parameters are not JSON.
func TestOpenAIBodyRefuses(t *testing.T) {
	t.Parallel()
	for name, req := range map[string]Request{
		"role":       {Model: "m", Messages: []Message{{Role: "narrator", Content: "x"}}},
		"parameters": {Model: "m", Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: []ToolSpec{{Name: "t", Parameters: json.RawMessage(`{`)}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := openAIRequestBody(req, false)
			require.Error(t, err)
			_, err = sdkParams(req)
			require.Error(t, err)
		})
	}
}

// sdkParams is the request as the SDK's parameter structs build it:
// what the adapter sent before it encoded its requests itself.
func sdkParams(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model: req.Model,
		// max_completion_tokens rather than the deprecated max_tokens, which
		// OpenAI's reasoning models reject; compatible servers that do not
		// know it ignore it.
		MaxCompletionTokens: openai.Int(maxTokens(req)),
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		msg, err := sdkMessage(m)
		if err != nil {
			return params, err
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &fn.Parameters); err != nil {
				return params, fmt.Errorf("tool %q parameters: %w", t.Name, err)
			}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}

func sdkMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		if len(m.Images) > 0 {
			parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}
			for _, img := range m.Images {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: img.dataURL()}))
			}
			return openai.UserMessage(parts), nil
		}
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		// Content may be null only when the message carries tool calls.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("message role %q", m.Role)
	}
}
