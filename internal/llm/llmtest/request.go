package llmtest

import (
	"encoding/json"
	"strings"
)

// Request is a request the fake received, decoded into the same shape
// whichever protocol it came in.
type Request struct {
	// Protocol is "openai" or "anthropic".
	Protocol string
	Model    string
	// System is the system prompt: OpenAI's system (and developer) messages,
	// or Anthropic's system parameter, joined by newlines.
	System string
	// Messages is the conversation without system messages. An Anthropic
	// user message carrying tool_result blocks becomes one Message of role
	// "tool" per block, so both protocols read alike.
	Messages []Message
	// Tools holds the names of the tools offered.
	Tools     []string
	MaxTokens int
	// APIKey is the key the client sent (Authorization bearer or x-api-key).
	APIKey string
	// Body is the request body as it arrived, for assertions on the wire.
	Body []byte
}

// Message is one message of a recorded [Request].
type Message struct {
	// Role is "user", "assistant" or "tool".
	Role       string
	Content    string
	ToolCallID string
	ToolCalls  []ToolCall
}

// Last returns the request's last message, or the zero Message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

const (
	openAIProtocol    = "openai"
	anthropicProtocol = "anthropic"
)

// textOf reads message content that is either a string or an array of
// {"type":"text","text":…} parts (both protocols allow both), joining parts.
// ok is false for anything else; null reads as "".
func textOf(raw json.RawMessage) (text string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", false
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), true
}
