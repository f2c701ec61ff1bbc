package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// openAIWire is the chat completions format.
type openAIWire struct{}

func (openAIWire) name() string            { return openAIProtocol }
func (openAIWire) requestIDHeader() string { return "X-Request-Id" }

func (openAIWire) apiKey(h http.Header) string {
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}

// openAIRequest is the part of a chat completion request the fake reads.
type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string           `json:"role"`
		Content    any              `json:"content"`
		ToolCallID string           `json:"tool_call_id"`
		ToolCalls  []openAIToolCall `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens           int  `json:"max_tokens"`
	MaxCompletionTokens int  `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
}

// decode reads body into req and checks it the way the real API does, so an
// adapter bug shows up as the 400 it would cause in production.
func (openAIWire) decode(body []byte, req *Request) error {
	var in openAIRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	if in.Model == "" {
		return errors.New("you must provide a model parameter")
	}
	if len(in.Messages) == 0 {
		return errors.New("'messages' must contain at least one message")
	}
	req.Model, req.Stream = in.Model, in.Stream
	req.MaxTokens = max(in.MaxTokens, in.MaxCompletionTokens)
	for _, t := range in.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Errorf("tools: want a function with a name, got type %q", t.Type)
		}
		req.Tools = append(req.Tools, t.Function.Name)
	}

	var system []string
	pending := map[string]bool{} // tool calls not yet answered
	for i, m := range in.Messages {
		content, ok := textOf(m.Content)
		if !ok {
			return fmt.Errorf("messages[%d].content: want a string or text parts", i)
		}
		if m.Role != "tool" && len(pending) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'", i)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, content)
			continue
		case "user":
		case "assistant":
			if m.Content == nil && len(m.ToolCalls) == 0 {
				return fmt.Errorf("messages[%d]: assistant content is required unless tool_calls is given", i)
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		default:
			return fmt.Errorf("messages[%d].role: unknown role %q", i, m.Role)
		}
		msg := Message{Role: m.Role, Content: content, ToolCallID: m.ToolCallID}
		images, err := imagesOf(m.Content)
		switch {
		case err != nil:
			return fmt.Errorf("messages[%d].content: %w", i, err)
		case len(images) > 0 && m.Role != "user":
			return fmt.Errorf("invalid 'messages[%d]': image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL", i, m.Role)
		}
		msg.Images = images
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Function.Name == "" {
				return fmt.Errorf("messages[%d].tool_calls: id and function.name are required", i)
			}
			pending[tc.ID] = true
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	return nil
}

// The chat completion body the fake answers with: structs, not maps, so
// encoding it does not sort keys on every answer.
type (
	openAICompletion struct {
		ID      string         `json:"id"`
		Object  string         `json:"object"`
		Created int64          `json:"created"`
		Model   string         `json:"model"`
		Choices []openAIChoice `json:"choices"`
		Usage   openAIUsage    `json:"usage"`
	}
	openAIChoice struct {
		Index   int           `json:"index"`
		Message openAIMessage `json:"message"`
		// Logprobs is always null.
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason string    `json:"finish_reason"`
	}
	openAIMessage struct {
		Role      string           `json:"role"`
		Content   *string          `json:"content"`
		Refusal   *string          `json:"refusal"`
		ToolCalls []openAIToolCall `json:"tool_calls,omitempty"`
	}
	openAIToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	openAIUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

func (openAIWire) success(req Request, reply Reply, seq int) any {
	msg := openAIMessage{Role: "assistant"}
	// A reply that only calls tools has null content, as OpenAI sends it.
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		msg.Content = &reply.Text
	}
	finish := "stop"
	for _, c := range fillIDs(reply.ToolCalls, "call", seq) {
		tc := openAIToolCall{ID: c.ID, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
		finish = "tool_calls"
	}
	in, out := usage(reply, req.Body)
	return openAICompletion{
		ID:      "chatcmpl-llmtest-" + strconv.Itoa(seq),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []openAIChoice{{Message: msg, FinishReason: finish}},
		Usage:   openAIUsage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out},
	}
}

func (openAIWire) failure(status int, msg string) any {
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
}

func (openAIWire) truncated() string {
	return `{"id":"chatcmpl-llmtest","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"partial`
}
