package llmtest

import (
	"encoding/base64"
	"fmt"
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
	// Stream says the client asked for a streamed answer.
	Stream bool
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
	// Images are the pictures a user message (or an Anthropic tool
	// result) carries, decoded.
	Images []Image
}

// Image is a picture a user message carried: an OpenAI image_url part with
// a base64 data: URL, or an Anthropic image block with a base64 source.
type Image struct {
	MediaType string
	Data      []byte
}

// imagesOf reads the image_url parts of OpenAI message content; an image
// that is not a base64 data: URL is an error, as weft sends only those.
func imagesOf(v any) ([]Image, error) {
	parts, _ := v.([]any)
	var out []Image
	for _, p := range parts {
		part, _ := p.(map[string]any)
		if part["type"] != "image_url" {
			continue
		}
		iu, _ := part["image_url"].(map[string]any)
		url, _ := iu["url"].(string)
		rest, ok := strings.CutPrefix(url, "data:")
		mediaType, data, ok2 := strings.Cut(rest, ";base64,")
		if !ok || !ok2 || mediaType == "" {
			return nil, fmt.Errorf("image_url: want a base64 data: URL, got %.40q", url)
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("image_url: %w", err)
		}
		out = append(out, Image{MediaType: mediaType, Data: b})
	}
	return out, nil
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
// ok is false for anything else; null reads as "". v is the content as
// decoded into an any, which reads it in the request's one decoding pass
// rather than in a second pass over its bytes.
func textOf(v any) (text string, ok bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case []any:
		texts := make([]string, 0, len(v))
		for _, p := range v {
			part, ok := p.(map[string]any)
			if !ok {
				return "", false
			}
			typ, ok1 := stringOrNull(part["type"])
			text, ok2 := stringOrNull(part["text"])
			if !ok1 || !ok2 {
				return "", false
			}
			if typ == "text" {
				texts = append(texts, text)
			}
		}
		return strings.Join(texts, "\n"), true
	}
	return "", false
}

// stringOrNull reads a JSON string field, missing or null reading as "".
func stringOrNull(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}
