package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

const anthropicName = "anthropic"

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	client anthropic.Client
	retry  *retrier
}

var _ Provider = (*anthropicProvider)(nil)

func newAnthropic(cfg Config, r *retrier) *anthropicProvider {
	opts := []option.RequestOption{
		// Without this the SDK reads ANTHROPIC_* variables, profiles and
		// federation files: weft's configuration comes from cmd/weft alone.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // retry.go retries; see retrier
		// Setting the timeout also stops the SDK from refusing non-streaming
		// calls whose max_tokens it estimates would take over 10 minutes.
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), retry: r}
}

// Name implements [Provider].
func (p *anthropicProvider) Name() string { return anthropicName }

// Complete implements [Provider].
func (p *anthropicProvider) Complete(ctx context.Context, req Request) (*Response, error) {
	params, err := anthropicParams(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: complete: %w", &Error{Kind: KindBadRequest, Provider: anthropicName, Err: err})
	}
	attempts := 0
	resp, err := p.retry.do(ctx, anthropicName, func(ctx context.Context) (*Response, error) {
		if emit := deltaFunc(req, &attempts); emit != nil {
			return p.stream(ctx, params, emit)
		}
		var httpResp *http.Response
		m, err := p.client.Messages.New(ctx, params, option.WithResponseInto(&httpResp))
		if err != nil {
			return nil, p.translate(ctx, httpResp, err)
		}
		return anthropicResponse(m)
	})
	if err != nil {
		return nil, fmt.Errorf("anthropic: complete: %w", err)
	}
	return resp, nil
}

// translate turns whatever the SDK returned into an *Error; see
// openAIProvider.translate for why httpResp matters.
func (p *anthropicProvider) translate(ctx context.Context, httpResp *http.Response, err error) *Error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		return classify(ctx, anthropicName, apiErr.StatusCode, apiErr.Response.Header, err)
	}
	if httpResp != nil {
		return classify(ctx, anthropicName, httpResp.StatusCode, httpResp.Header, err)
	}
	return classify(ctx, anthropicName, 0, nil, err)
}

// anthropicParams maps a Request onto Messages API parameters.
func anthropicParams(req Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: req.Model, MaxTokens: maxTokens(req)}
	if req.System != "" {
		params.System = append(params.System, anthropic.TextBlockParam{Text: req.System})
	}
	for _, m := range req.Messages {
		if m.Role == RoleSystem {
			// The Messages API has no system turns; later system messages
			// join the system parameter, in order.
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			continue
		}
		role, blocks, err := anthropicBlocks(m)
		if err != nil {
			return params, err
		}
		if len(blocks) == 0 {
			// An empty turn (a model's empty end_turn, recorded and replayed)
			// would be a 400 forever, so it is left out.
			continue
		}
		// Tool results travel as blocks of a user message, and all results
		// for one assistant turn must sit in the single message that follows
		// it, so consecutive user-side messages are merged into one.
		if n := len(params.Messages); n > 0 && role == anthropic.MessageParamRoleUser && params.Messages[n-1].Role == role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, blocks...)
			continue
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema, err := anthropicSchema(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("tool %q parameters: %w", t.Name, err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// anthropicBlocks maps one non-system Message onto a role and content blocks.
func anthropicBlocks(m Message) (anthropic.MessageParamRole, []anthropic.ContentBlockParamUnion, error) {
	switch m.Role {
	case RoleUser:
		blocks := textBlocks(m.Content)
		for _, img := range m.Images {
			blocks = append(blocks, anthropic.NewImageBlockBase64(img.MediaType, base64.StdEncoding.EncodeToString(img.Data)))
		}
		return anthropic.MessageParamRoleUser, blocks, nil
	case RoleTool:
		result := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
		// An empty text block is rejected by the API; an empty result is not.
		if m.Content != "" {
			result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
		}
		// The Messages API takes a tool's pictures in its result.
		for _, img := range m.Images {
			result.Content = append(result.Content, anthropic.ToolResultBlockParamContentUnion{
				OfImage: anthropic.NewImageBlockBase64(img.MediaType, base64.StdEncoding.EncodeToString(img.Data)).OfImage})
		}
		return anthropic.MessageParamRoleUser, []anthropic.ContentBlockParamUnion{{OfToolResult: &result}}, nil
	case RoleAssistant:
		blocks := textBlocks(m.Content)
		for _, tc := range m.ToolCalls {
			input := tc.Arguments
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !json.Valid(input) {
				return "", nil, fmt.Errorf("tool call %q arguments are not JSON", tc.ID)
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
		}
		return anthropic.MessageParamRoleAssistant, blocks, nil
	default:
		return "", nil, fmt.Errorf("message role %q", m.Role)
	}
}

// textBlocks is content as a text block, or none when it is empty: the API
// rejects empty text blocks.
func textBlocks(content string) []anthropic.ContentBlockParamUnion {
	if content == "" {
		return nil
	}
	return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(content)}
}

// anthropicSchema splits a JSON Schema object into the SDK's input schema,
// which names properties and required and carries the rest as extra fields.
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var schema anthropic.ToolInputSchemaParam
	if len(raw) == 0 {
		schema.Properties = map[string]any{}
		return schema, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return schema, err
	}
	for k, v := range fields {
		var err error
		switch k {
		case "type":
			// Always "object"; the SDK writes it.
		case "properties":
			err = json.Unmarshal(v, &schema.Properties)
		case "required":
			err = json.Unmarshal(v, &schema.Required)
		default:
			if schema.ExtraFields == nil {
				schema.ExtraFields = map[string]any{}
			}
			schema.ExtraFields[k] = v
		}
		if err != nil {
			return schema, fmt.Errorf("%s: %w", k, err)
		}
	}
	if schema.Properties == nil {
		// The SDK leaves out an input schema with no properties, and the
		// API refuses a tool without one: a tool taking no arguments
		// (MCP servers send {"type":"object"}) must still send them empty.
		schema.Properties = map[string]any{}
	}
	return schema, nil
}

// anthropicResponse maps a message onto a Response, refusing one that parsed
// but is not a whole answer.
func anthropicResponse(m *anthropic.Message) (*Response, error) {
	if m == nil || !m.JSON.Content.Valid() {
		return nil, &Error{Kind: KindMalformed, StatusCode: http.StatusOK, Provider: anthropicName, Err: errors.New("response has no content")}
	}
	resp := &Response{
		Model:      m.Model,
		StopReason: string(m.StopReason),
		// Cached prompt tokens are counted apart by Anthropic; they are input
		// all the same, as OpenAI's prompt_tokens counts them.
		Usage: Usage{
			InputTokens:  int(m.Usage.InputTokens + m.Usage.CacheCreationInputTokens + m.Usage.CacheReadInputTokens),
			OutputTokens: int(m.Usage.OutputTokens),
		},
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			resp.Content += b.Text
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: jsonArguments(string(b.Input))})
		}
	}
	return resp, nil
}
