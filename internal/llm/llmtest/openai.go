package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
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
	req.Model = in.Model
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
			if (len(m.Content) == 0 || string(m.Content) == "null") && len(m.ToolCalls) == 0 {
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

func (openAIWire) success(req Request, reply Reply, seq int) any {
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	type message struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		Refusal   *string    `json:"refusal"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}
	msg := message{Role: "assistant"}
	// A reply that only calls tools has null content, as OpenAI sends it.
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		msg.Content = &reply.Text
	}
	finish := "stop"
	for _, c := range fillIDs(reply.ToolCalls, "call", seq) {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: function{Name: c.Name, Arguments: c.Arguments}})
		finish = "tool_calls"
	}
	in, out := usage(reply, req.Body)
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", seq),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": finish,
		}},
		"usage": map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
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
