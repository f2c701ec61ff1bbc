package llmtest

import (
	"encoding/json"
	"strconv"
	"time"
)

// The chat completion chunk the fake streams, as OpenAI sends it.
type (
	openAIChunk struct {
		ID      string              `json:"id"`
		Object  string              `json:"object"`
		Created int64               `json:"created"`
		Model   string              `json:"model"`
		Choices []openAIChunkChoice `json:"choices"`
		Usage   *openAIUsage        `json:"usage,omitempty"`
	}
	openAIChunkChoice struct {
		Index        int         `json:"index"`
		Delta        openAIDelta `json:"delta"`
		Logprobs     *struct{}   `json:"logprobs"`
		FinishReason *string     `json:"finish_reason"`
	}
	openAIDelta struct {
		Role      string                `json:"role,omitempty"`
		Content   *string               `json:"content,omitempty"`
		ToolCalls []openAIToolCallDelta `json:"tool_calls,omitempty"`
	}
	openAIToolCallDelta struct {
		Index    int    `json:"index"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
)

// events streams reply as chat completion chunks: the role, the text a
// piece at a time, each tool call's id and name and then its arguments in
// pieces, the finish reason, the usage chunk the SDK asks for
// (stream_options.include_usage), and [DONE].
func (openAIWire) events(req Request, reply Reply, seq int) []event {
	base := openAIChunk{ID: "chatcmpl-llmtest-" + strconv.Itoa(seq), Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: req.Model}
	chunk := func(d openAIDelta, finish string) openAIChunk {
		c := base
		ch := openAIChunkChoice{Delta: d}
		if finish != "" {
			ch.FinishReason = &finish
		}
		c.Choices = []openAIChunkChoice{ch}
		return c
	}
	empty := ""
	evs := []event{{data: chunk(openAIDelta{Role: "assistant", Content: &empty}, "")}}
	for _, p := range pieces(reply.Text, reply.Chunk) {
		evs = append(evs, event{data: chunk(openAIDelta{Content: &p}, ""), delta: true})
	}
	finish := "stop"
	for i, c := range fillIDs(reply.ToolCalls, "call", seq) {
		head := openAIToolCallDelta{Index: i, ID: c.ID, Type: "function"}
		head.Function.Name = c.Name
		evs = append(evs, event{data: chunk(openAIDelta{ToolCalls: []openAIToolCallDelta{head}}, ""), delta: true})
		for _, a := range argPieces(c.Arguments, reply.Chunk) {
			d := openAIToolCallDelta{Index: i}
			d.Function.Arguments = a
			evs = append(evs, event{data: chunk(openAIDelta{ToolCalls: []openAIToolCallDelta{d}}, ""), delta: true})
		}
		finish = "tool_calls"
	}
	evs = append(evs, event{data: chunk(openAIDelta{}, finish)})
	in, out := usage(reply, req.Body)
	last := base
	last.Choices = []openAIChunkChoice{}
	last.Usage = &openAIUsage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
	return append(evs, event{data: last}, event{data: "[DONE]"})
}

// events streams reply as Messages API events: message_start, a
// content block per text and tool call (content_block_start, its deltas,
// content_block_stop; tool input as input_json_delta pieces), a ping,
// message_delta with the stop reason and usage, and message_stop.
func (anthropicWire) events(req Request, reply Reply, seq int) []event {
	in, out := usage(reply, req.Body)
	start := anthropicMessage{
		ID: "msg_llmtest_" + strconv.Itoa(seq), Type: "message", Role: "assistant", Model: req.Model,
		Content: []any{}, Usage: anthropicUsage{InputTokens: in, OutputTokens: 1},
	}
	evs := []event{
		{name: "message_start", data: map[string]any{"type": "message_start", "message": start}},
		{name: "ping", data: map[string]any{"type": "ping"}},
	}
	index := 0
	block := func(b any, deltas []map[string]any) {
		evs = append(evs, event{name: "content_block_start", data: map[string]any{"type": "content_block_start", "index": index, "content_block": b}})
		for _, d := range deltas {
			evs = append(evs, event{name: "content_block_delta", data: map[string]any{"type": "content_block_delta", "index": index, "delta": d}, delta: true})
		}
		evs = append(evs, event{name: "content_block_stop", data: map[string]any{"type": "content_block_stop", "index": index}})
		index++
	}
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		var deltas []map[string]any
		for _, p := range pieces(reply.Text, reply.Chunk) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
		block(anthropicText{Type: "text", Text: ""}, deltas)
	}
	stop := "end_turn"
	for _, c := range fillIDs(reply.ToolCalls, "toolu", seq) {
		args := c.Arguments
		if !json.Valid([]byte(args)) {
			// The real API always sends an object; keep the stream valid.
			b, _ := json.Marshal(args)
			args = string(b)
		}
		var deltas []map[string]any
		for _, p := range argPieces(args, reply.Chunk) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(anthropicToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage("{}")}, deltas)
		stop = "tool_use"
	}
	return append(evs,
		event{name: "message_delta", data: map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}}},
		event{name: "message_stop", data: map[string]any{"type": "message_stop"}},
	)
}

func (openAIWire) streamError() event {
	return event{data: map[string]any{"error": map[string]any{
		"message": "llmtest: the server had an error while processing your request", "type": "server_error", "param": nil, "code": nil}}}
}

func (anthropicWire) streamError() event {
	return event{name: "error", data: map[string]any{"type": "error",
		"error": map[string]any{"type": "overloaded_error", "message": "llmtest: Overloaded"}}}
}
