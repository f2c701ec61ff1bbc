package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// anthropicWire is the Messages API format.
type anthropicWire struct{}

func (anthropicWire) name() string                { return anthropicProtocol }
func (anthropicWire) requestIDHeader() string     { return "Request-Id" }
func (anthropicWire) apiKey(h http.Header) string { return h.Get("X-Api-Key") }

// anthropicRequest is the part of a Messages request the fake reads.
type anthropicRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	System    any    `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// anthropicBlock is any content block, with the fields of the kinds the fake
// understands.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   any             `json:"content"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// decode reads body into req and checks it the way the real API does; in
// particular every tool_use must be answered by a tool_result in the very
// next message, which is why an adapter must merge consecutive tool results.
func (anthropicWire) decode(body []byte, req *Request) error {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	switch {
	case in.Model == "":
		return errors.New("model: Field required")
	case in.MaxTokens < 1:
		return errors.New("max_tokens: Field required (at least 1)")
	case len(in.Messages) == 0:
		return errors.New("messages: at least one message is required")
	}
	req.Model, req.MaxTokens, req.Stream = in.Model, in.MaxTokens, in.Stream
	system, ok := textOf(in.System)
	if !ok {
		return errors.New("system: want a string or text blocks")
	}
	req.System = system
	for i, t := range in.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if t.Name == "" || json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			return fmt.Errorf("tools.%d: name and an input_schema of type object are required", i)
		}
		req.Tools = append(req.Tools, t.Name)
	}

	var unanswered map[string]bool // tool_use ids of the previous assistant message
	for i, m := range in.Messages {
		blocks, err := blocksOf(m.Content)
		if err != nil {
			return fmt.Errorf("messages.%d.content: %w", i, err)
		}
		var msgs []Message
		switch m.Role {
		case "user":
			msgs, err = userMessages(blocks, unanswered)
		case "assistant":
			if len(unanswered) > 0 {
				err = errors.New("tool_use ids were found without tool_result blocks immediately after")
			} else {
				var msg Message
				msg, unanswered, err = assistantMessage(blocks)
				msgs = []Message{msg}
			}
		default:
			err = fmt.Errorf("unexpected role %q", m.Role)
		}
		if err != nil {
			return fmt.Errorf("messages.%d: %w", i, err)
		}
		if m.Role == "user" {
			if len(unanswered) > 0 {
				return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after", i)
			}
			unanswered = nil
		}
		req.Messages = append(req.Messages, msgs...)
	}
	return nil
}

// blocksOf reads message content: a string is one text block. raw is a
// value the request's decoding has checked, so its first byte says which
// form it is; trying each form in turn would scan it again.
func blocksOf(raw json.RawMessage) ([]anthropicBlock, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return []anthropicBlock{{Type: "text", Text: s}}, nil
		}
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New("want a string or an array of content blocks")
	}
	if len(blocks) == 0 {
		return nil, errors.New("at least one content block is required")
	}
	return blocks, nil
}

// userMessages reads a user message: its text blocks join into one "user"
// Message and each tool_result becomes a "tool" Message, in block order. A
// result answers an id in unanswered, which it removes.
func userMessages(blocks []anthropicBlock, unanswered map[string]bool) ([]Message, error) {
	var msgs []Message
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text == "" {
				return nil, errors.New("text content blocks must be non-empty")
			}
			if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
				msgs[n-1].Content += "\n" + b.Text
				continue
			}
			msgs = append(msgs, Message{Role: "user", Content: b.Text})
		case "image":
			if b.Source == nil || b.Source.Type != "base64" || b.Source.MediaType == "" {
				return nil, errors.New("image blocks want a base64 source with a media_type")
			}
			data, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("image source: %w", err)
			}
			img := Image{MediaType: b.Source.MediaType, Data: data}
			if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
				msgs[n-1].Images = append(msgs[n-1].Images, img)
				continue
			}
			msgs = append(msgs, Message{Role: "user", Images: []Image{img}})
		case "tool_result":
			if !unanswered[b.ToolUseID] {
				return nil, fmt.Errorf("unexpected tool_use_id found in tool_result blocks: %s", b.ToolUseID)
			}
			delete(unanswered, b.ToolUseID)
			content, ok := textOf(b.Content)
			if !ok {
				return nil, errors.New("tool_result content: want a string or text and image blocks")
			}
			images, err := resultImages(b.Content)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, Message{Role: "tool", ToolCallID: b.ToolUseID, Content: content, Images: images})
		default:
			return nil, fmt.Errorf("unsupported content block type %q", b.Type)
		}
	}
	return msgs, nil
}

// resultImages reads the image blocks of a tool_result's content (decoded
// into an any), which the Messages API takes beside its text.
func resultImages(content any) ([]Image, error) {
	blocks, _ := content.([]any)
	var out []Image
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		if block["type"] != "image" {
			continue
		}
		src, _ := block["source"].(map[string]any)
		mediaType, _ := src["media_type"].(string)
		data, _ := src["data"].(string)
		if src["type"] != "base64" || mediaType == "" {
			return nil, errors.New("tool_result image blocks want a base64 source with a media_type")
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("tool_result image source: %w", err)
		}
		out = append(out, Image{MediaType: mediaType, Data: b})
	}
	return out, nil
}

// assistantMessage reads an assistant message and returns the ids of the
// tools it called, which the next message must answer.
func assistantMessage(blocks []anthropicBlock) (Message, map[string]bool, error) {
	msg := Message{Role: "assistant"}
	calls := map[string]bool{}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text == "" {
				return msg, nil, errors.New("text content blocks must be non-empty")
			}
			texts = append(texts, b.Text)
		case "tool_use":
			var input map[string]any
			if b.ID == "" || b.Name == "" || json.Unmarshal(b.Input, &input) != nil || input == nil {
				return msg, nil, errors.New("tool_use blocks need an id, a name and an object input")
			}
			calls[b.ID] = true
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		default:
			return msg, nil, fmt.Errorf("unsupported content block type %q", b.Type)
		}
	}
	msg.Content = strings.Join(texts, "\n")
	return msg, calls, nil
}

// The Messages body the fake answers with, as structs (see
// openAICompletion). Content holds anthropicText and anthropicToolUse
// blocks.
type (
	anthropicMessage struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Role         string         `json:"role"`
		Model        string         `json:"model"`
		Content      []any          `json:"content"`
		StopReason   string         `json:"stop_reason"`
		StopSequence *string        `json:"stop_sequence"`
		Usage        anthropicUsage `json:"usage"`
	}
	anthropicText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	anthropicToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	anthropicUsage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
)

func (anthropicWire) success(req Request, reply Reply, seq int) any {
	content := []any{}
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		content = append(content, anthropicText{Type: "text", Text: reply.Text})
	}
	stop := "end_turn"
	for _, c := range fillIDs(reply.ToolCalls, "toolu", seq) {
		input := json.RawMessage(c.Arguments)
		if !json.Valid(input) {
			// The real API always sends an object; keep the body valid JSON.
			input, _ = json.Marshal(c.Arguments)
		}
		content = append(content, anthropicToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
		stop = "tool_use"
	}
	in, out := usage(reply, req.Body)
	return anthropicMessage{
		ID:         "msg_llmtest_" + strconv.Itoa(seq),
		Type:       "message",
		Role:       "assistant",
		Model:      req.Model,
		Content:    content,
		StopReason: stop,
		Usage:      anthropicUsage{InputTokens: in, OutputTokens: out},
	}
}

func (anthropicWire) failure(status int, msg string) any {
	typ := "api_error"
	switch {
	case status == http.StatusBadRequest:
		typ = "invalid_request_error"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status < 500:
		typ = "invalid_request_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func (anthropicWire) truncated() string {
	return `{"id":"msg_llmtest","type":"message","role":"assistant","content":[{"type":"text","text":"partial`
}
