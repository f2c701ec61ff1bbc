package llm

import (
	"context"
	"errors"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// stream makes one streaming attempt: it hands each text delta to emit and
// lets the SDK's accumulator assemble the events (tool inputs from their
// input_json_delta pieces) into the message the plain call would have
// returned. A stream that ends before message_stop was cut, and is
// malformed (retryable) like a body cut mid-read.
func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams, emit func(string)) (*Response, error) {
	var httpResp *http.Response
	s := p.client.Messages.NewStreaming(ctx, params, option.WithResponseInto(&httpResp))
	defer func() { _ = s.Close() }()
	var (
		msg     anthropic.Message
		stopped bool
	)
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: anthropicName, Err: err}
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				emit(ev.Delta.Text)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, midStream(p.translate(ctx, httpResp, err))
	}
	if ctx.Err() != nil {
		return nil, classify(ctx, anthropicName, 0, nil, ctx.Err())
	}
	if !stopped {
		return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: anthropicName, Err: errors.New("stream ended without message_stop")}
	}
	return anthropicResponse(&msg)
}
