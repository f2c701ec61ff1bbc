package llm

import (
	"encoding/json"
	"fmt"
)

// The chat completion request's body is encoded here, with encoding/json,
// and handed to the SDK whole (param.SetJSON): the SDK's own encoding of
// its parameter structs (unions, optional fields, a tool's parameters
// decoded into a map to be encoded again) was a third of what the
// processor spent on a turn in a CPU profile of `weft-bench turns`
// (docs/benchmarks.md). It is the same JSON: TestOpenAIBodyMatchesSDK
// compares it with the SDK's encoding of the same request.

// openAIBody is a chat completion request.
type openAIBody struct {
	Model    string              `json:"model"`
	Messages []openAIBodyMessage `json:"messages"`
	// max_completion_tokens rather than the deprecated max_tokens, which
	// OpenAI's reasoning models reject; compatible servers that do not
	// know it ignore it.
	MaxCompletionTokens int64                   `json:"max_completion_tokens"`
	Tools               []openAIBodyTool        `json:"tools,omitempty"`
	StreamOptions       *openAIBodyStreamOption `json:"stream_options,omitempty"`
}

type openAIBodyMessage struct {
	Role string `json:"role"`
	// Content is a *string, or []openAIBodyPart for a user's message with
	// images; it is omitted only from an assistant's message with tool calls.
	Content    any                  `json:"content,omitempty"`
	ToolCalls  []openAIBodyToolCall `json:"tool_calls,omitempty"`
	ToolCallID string               `json:"tool_call_id,omitempty"`
}

// openAIBodyPart is one part of a user message's content: text, or an
// image as a data: URL.
type openAIBodyPart struct {
	Type     string              `json:"type"`
	Text     *string             `json:"text,omitempty"`
	ImageURL *openAIBodyImageURL `json:"image_url,omitempty"`
}

type openAIBodyImageURL struct {
	URL string `json:"url"`
}

type openAIBodyToolCall struct {
	ID       string                 `json:"id"`
	Type     string                 `json:"type"`
	Function openAIBodyCallFunction `json:"function"`
}

type openAIBodyCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openAIBodyTool struct {
	Type     string             `json:"type"`
	Function openAIBodyFunction `json:"function"`
}

type openAIBodyFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type openAIBodyStreamOption struct {
	IncludeUsage bool `json:"include_usage"`
}

// toolImagesText introduces the pictures tool results returned, sent after
// the results in a user message.
const toolImagesText = "The images the tool results above returned, in order:"

// openAIRequestBody encodes req as a chat completion request, asking for
// the usage in the stream's last chunk when it streams.
func openAIRequestBody(req Request, stream bool) ([]byte, error) {
	body := openAIBody{Model: req.Model, MaxCompletionTokens: maxTokens(req),
		Messages: make([]openAIBodyMessage, 0, len(req.Messages)+1)}
	if req.System != "" {
		body.Messages = append(body.Messages, openAIBodyMessage{Role: string(RoleSystem), Content: &req.System})
	}
	// toolImages are the pictures of the tool results just encoded: a tool
	// message takes only text, so they follow the results in one user
	// message (tool messages must directly follow their assistant's).
	var toolImages []openAIBodyPart
	flushToolImages := func() {
		if len(toolImages) == 0 {
			return
		}
		text := toolImagesText
		parts := append([]openAIBodyPart{{Type: "text", Text: &text}}, toolImages...)
		body.Messages = append(body.Messages, openAIBodyMessage{Role: string(RoleUser), Content: parts})
		toolImages = nil
	}
	for _, m := range req.Messages {
		if m.Role != RoleTool {
			flushToolImages()
		}
		msg := openAIBodyMessage{Role: string(m.Role), Content: &m.Content}
		switch m.Role {
		case RoleSystem:
		case RoleUser:
			if len(m.Images) > 0 {
				parts := []openAIBodyPart{{Type: "text", Text: &m.Content}}
				for _, img := range m.Images {
					parts = append(parts, openAIBodyPart{Type: "image_url", ImageURL: &openAIBodyImageURL{URL: img.dataURL()}})
				}
				msg.Content = parts
			}
		case RoleTool:
			msg.ToolCallID = m.ToolCallID
			for _, img := range m.Images {
				toolImages = append(toolImages, openAIBodyPart{Type: "image_url", ImageURL: &openAIBodyImageURL{URL: img.dataURL()}})
			}
		case RoleAssistant:
			// Content may be null only when the message carries tool calls.
			if m.Content == "" && len(m.ToolCalls) > 0 {
				msg.Content = nil // an untyped nil: omitted
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, openAIBodyToolCall{ID: tc.ID, Type: "function",
					Function: openAIBodyCallFunction{Name: tc.Name, Arguments: args}})
			}
		default:
			return nil, fmt.Errorf("message role %q", m.Role)
		}
		body.Messages = append(body.Messages, msg)
	}
	flushToolImages()
	for _, t := range req.Tools {
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return nil, fmt.Errorf("tool %q parameters: not valid JSON", t.Name)
		}
		body.Tools = append(body.Tools, openAIBodyTool{Type: "function", Function: openAIBodyFunction(t)})
	}
	if stream {
		body.StreamOptions = &openAIBodyStreamOption{IncludeUsage: true}
	}
	return json.Marshal(body)
}
