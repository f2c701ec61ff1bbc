package llm

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// stream makes one streaming attempt: it hands each piece of content to
// emit and assembles the chunks into the Response the plain call would have
// returned. A stream that ends before a finish_reason arrived was cut, and
// is malformed (retryable) like a body cut mid-read.
func (p *openAIProvider) stream(ctx context.Context, params openai.ChatCompletionNewParams, emit func(string)) (*Response, error) {
	// The request is NewStreaming's (the same call with stream set), but
	// its chunks are decoded into openAIChunk, the fields add reads, with
	// encoding/json: the SDK's reflection decoder of its own chunk type
	// was an eighth of the processor's CPU in a profile of weft-bench turns
	// (docs/benchmarks.md). The SSE framing and its error events are the
	// SDK's still.
	var httpResp *http.Response
	_, err := p.chat.New(ctx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&httpResp))
	s := ssestream.NewStream[openAIChunk](ssestream.NewDecoder(httpResp), err)
	defer func() { _ = s.Close() }()
	var acc openAIStream
	for s.Next() {
		emit(acc.add(s.Current()))
	}
	if err := s.Err(); err != nil {
		return nil, midStream(p.translate(ctx, httpResp, err))
	}
	if ctx.Err() != nil {
		return nil, classify(ctx, openAIName, 0, nil, ctx.Err())
	}
	return acc.response()
}

// openAIStream assembles chat completion chunks. Tool calls arrive in
// pieces keyed by index: the first carries the id and name, the rest add to
// the arguments.
type openAIStream struct {
	resp     Response
	finished bool
	calls    map[int64]*openAIStreamCall
}

type openAIStreamCall struct {
	id, name, typ string
	args          []byte
}

// openAIChunk is what add reads of a chat completion chunk.
type openAIChunk struct {
	Model string `json:"model"`
	// Usage is nil when absent or null: only the last chunk carries it.
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// add folds one chunk in and returns the content it added.
func (a *openAIStream) add(c openAIChunk) string {
	if c.Model != "" {
		a.resp.Model = c.Model
	}
	if c.Usage != nil {
		a.resp.Usage = Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens)}
	}
	var text string
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is ever asked for
		}
		text += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			if a.calls == nil {
				a.calls = map[int64]*openAIStreamCall{}
			}
			call := a.calls[tc.Index]
			if call == nil {
				call = &openAIStreamCall{}
				a.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			if tc.Type != "" {
				call.typ = tc.Type
			}
			call.args = append(call.args, tc.Function.Arguments...)
		}
		if ch.FinishReason != "" {
			a.resp.StopReason, a.finished = ch.FinishReason, true
		}
	}
	a.resp.Content += text
	return text
}

// response is the assembled Response, or a malformed error when the stream
// never said it had finished.
func (a *openAIStream) response() (*Response, error) {
	if !a.finished {
		return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: openAIName, Err: errors.New("stream ended without a finish_reason")}
	}
	idx := make([]int64, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	resp := a.resp
	for _, i := range idx {
		c := a.calls[i]
		// As in openAIResponse, only function calls can come back.
		if c.typ != "" && c.typ != "function" {
			continue
		}
		if c.id == "" || c.name == "" {
			return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: openAIName, Err: errors.New("streamed tool call without an id or a name")}
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.id, Name: c.name, Arguments: jsonArguments(string(c.args))})
	}
	return &resp, nil
}
