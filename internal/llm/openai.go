package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
)

const openAIName = "openai"

// openAIProvider speaks chat completions to OpenAI or any server that
// imitates it.
type openAIProvider struct {
	chat  openai.ChatCompletionService
	retry *retrier
}

var _ Provider = (*openAIProvider)(nil)

func newOpenAI(cfg Config, r *retrier) *openAIProvider {
	opts := []option.RequestOption{
		// The service is built directly rather than through openai.NewClient,
		// which reads OPENAI_* variables (organization, project, custom
		// headers) from the environment: weft's configuration comes from
		// cmd/weft alone.
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // retry.go retries; see retrier
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &openAIProvider{chat: openai.NewChatCompletionService(opts...), retry: r}
}

// Name implements [Provider].
func (p *openAIProvider) Name() string { return openAIName }

// Complete implements [Provider].
func (p *openAIProvider) Complete(ctx context.Context, req Request) (*Response, error) {
	body, err := openAIRequestBody(req, req.OnDelta != nil)
	if err != nil {
		return nil, fmt.Errorf("openai: complete: %w", &Error{Kind: KindBadRequest, Provider: openAIName, Err: err})
	}
	var params openai.ChatCompletionNewParams
	param.SetJSON(body, &params)
	attempts := 0
	resp, err := p.retry.do(ctx, openAIName, func(ctx context.Context) (*Response, error) {
		if emit := deltaFunc(req, &attempts); emit != nil {
			return p.stream(ctx, params, emit)
		}
		var httpResp *http.Response
		c, err := p.chat.New(ctx, params, option.WithResponseInto(&httpResp))
		if err != nil {
			return nil, p.translate(ctx, httpResp, err)
		}
		return openAIResponse(c)
	})
	if err != nil {
		return nil, fmt.Errorf("openai: complete: %w", err)
	}
	return resp, nil
}

// translate turns whatever the SDK returned into an *Error. httpResp is the
// response the SDK saw, if one arrived; it is what tells a 200 with a broken
// body (malformed) from a connection that failed before any answer.
func (p *openAIProvider) translate(ctx context.Context, httpResp *http.Response, err error) *Error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		if detail := strings.TrimSpace(apiErr.Code + " " + apiErr.Message); detail != "" {
			// The SDK's message is the status alone; the body says why
			// (context_length_exceeded, an invalid value, …).
			err = fmt.Errorf("%w: %s", err, detail)
		}
		return classify(ctx, openAIName, apiErr.StatusCode, apiErr.Response.Header, err)
	}
	if httpResp != nil {
		// An error status whose body was not the usual JSON error object
		// (a proxy's HTML page, say) does not become an *openai.Error.
		return classify(ctx, openAIName, httpResp.StatusCode, httpResp.Header, err)
	}
	return classify(ctx, openAIName, 0, nil, err)
}

// openAIResponse maps a chat completion onto a Response, refusing one that
// parsed but is not a whole answer.
func openAIResponse(c *openai.ChatCompletion) (*Response, error) {
	if c == nil || len(c.Choices) == 0 || !c.Choices[0].JSON.Message.Valid() {
		return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: openAIName, Err: errors.New("response has no choice with a message")}
	}
	choice := c.Choices[0]
	resp := &Response{
		Content:    choice.Message.Content,
		Model:      c.Model,
		StopReason: choice.FinishReason,
		Usage:      Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens)},
	}
	for _, tc := range choice.Message.ToolCalls {
		// Custom (free-text) tools are never offered, so only function calls
		// can come back; a server that omits "type" still means a function.
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: jsonArguments(tc.Function.Arguments)})
	}
	return resp, nil
}

// jsonArguments keeps a model's tool arguments as they came when they are
// JSON, and otherwise wraps them as a JSON string (see ToolCall.Arguments).
func jsonArguments(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return b
}
