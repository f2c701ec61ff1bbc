// Package llm is weft's door to language models: the [Provider] interface,
// the protocol-neutral request and response types, and two adapters built on
// the official SDKs, one for OpenAI-compatible chat completions (OpenAI,
// Ollama, vLLM, OpenRouter, …) and one for the Anthropic Messages API.
//
// A call streams when its Request has an OnDelta consumer (see stream.go)
// and is a single request-response otherwise; either way it returns the
// whole [Response] or an error. Every failure is an [*Error] whose Kind says what
// the caller may do about it; [IsRetryable] tells the transient ones apart.
// Retries happen inside Complete (see retry.go), so a caller that gets an
// error back has already seen the configured number of attempts.
package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Role is the author of a [Message].
type Role string

// The roles a [Message] can have. RoleTool marks the result of a tool call,
// answering the [ToolCall] whose ID is in Message.ToolCallID.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation. Its JSON form is what an llm_call
// stitch stores in llm_request (snake_case, as all stored JSON).
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls holds the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is set on RoleTool messages: the call this is the result of.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Images are pictures a RoleUser message carries (a file a person
	// attached), after its text, or a RoleTool message (a tool returned
	// them): Anthropic takes those in the tool's result; chat completions
	// take only text there, so the OpenAI adapter sends them in a user
	// message after the results. Other roles' images are not sent.
	Images []Image `json:"images,omitempty"`
}

// Image is a picture for a model that sees. Its JSON form (what an llm_call
// stitch stores) names the image without its bytes, which would make every
// stored request as large as its pictures.
type Image struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp: what
	// both providers accept.
	MediaType string `json:"media_type"`
	Name      string `json:"name,omitempty"`
	Data      []byte `json:"-"`
	Size      int    `json:"size"`
}

// dataURL is img as a data: URL, as OpenAI-compatible servers take it.
func (img Image) dataURL() string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// ToolCall is a model's request to run a tool. Its JSON form is what an
// llm_call stitch stores in llm_response.tool_calls.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is always valid JSON: an adapter that receives arguments the
	// model got wrong passes them on as a JSON string, so the Response can
	// still be stored and the tool can report the mistake back to the model.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object; empty means "no parameters".
	Parameters json.RawMessage
}

// Request is one completion call.
type Request struct {
	Model string
	// System is the system prompt: the first system message for OpenAI, the
	// system parameter for Anthropic.
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the reply; 0 means the adapter default (4096).
	MaxTokens int
	// OnDelta, when set, makes the call stream and receives the answer's
	// text as the model writes it (see [Delta]); nil makes one plain call.
	// It runs on the calling goroutine, between reads of the stream, so it
	// must not block for long.
	OnDelta func(Delta)
}

// Usage counts the tokens a call consumed.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is a completed call. A Response is only ever returned for a reply
// that arrived whole and parsed; anything less is an [*Error] of
// [KindMalformed].
type Response struct {
	Content   string
	ToolCalls []ToolCall
	// Model is the model that answered, as the provider reports it.
	Model string
	// StopReason is the provider's own word for why generation stopped
	// ("stop", "tool_calls", "end_turn", "tool_use", "length", …).
	StopReason string
	Usage      Usage
}

// Provider completes requests against one model provider.
type Provider interface {
	// Name is "openai", "anthropic" or "none".
	Name() string
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Config selects and configures a [Provider]; see [New].
type Config struct {
	// Provider is "openai", "anthropic", or "" for none.
	Provider string
	APIKey   string
	// BaseURL overrides the provider's endpoint, so Ollama, vLLM, OpenRouter
	// and test fakes work. OpenAI-compatible servers want the URL up to and
	// including "/v1"; Anthropic wants the URL without it.
	BaseURL string
	// HTTPClient is optional; nil means a plain client on the default
	// transport.
	HTTPClient *http.Client
	// MaxRetries is how many times a retryable failure is retried: 0 means 4,
	// a negative value disables retries.
	MaxRetries int
	// Timeout bounds each attempt; 0 means 120s.
	Timeout time.Duration
	// MinBackoff is the wait before the first retry when the server gives no
	// Retry-After hint; it doubles per attempt up to 30s. 0 means 500ms.
	// Tests set it to a millisecond to stay fast.
	MinBackoff time.Duration
}

// Defaults applied by [New] to zero Config fields.
const (
	defaultMaxRetries = 4
	defaultTimeout    = 120 * time.Second
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxTokens  = 4096
)

// New returns the provider cfg selects. An empty cfg.Provider yields a
// provider whose Complete always fails with [ErrNotConfigured], so weft runs
// without model credentials and says so on use.
func New(cfg Config) (Provider, error) {
	if cfg.BaseURL != "" {
		if _, err := url.Parse(cfg.BaseURL); err != nil {
			return nil, fmt.Errorf("llm: new: base url: %w", err)
		}
	}
	if cfg.HTTPClient == nil {
		// The SDKs dereference their client, so they must always get one.
		cfg.HTTPClient = &http.Client{Transport: pooledTransport()}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	r := newRetrier(cfg)
	switch cfg.Provider {
	case "":
		return noneProvider{}, nil
	case openAIName:
		return newOpenAI(cfg, r), nil
	case anthropicName:
		return newAnthropic(cfg, r), nil
	default:
		return nil, fmt.Errorf("llm: new: unknown provider %q (want %q, %q or empty)", cfg.Provider, openAIName, anthropicName)
	}
}

// noneProvider stands in when no provider is configured.
type noneProvider struct{}

var _ Provider = noneProvider{}

// Name implements [Provider].
func (noneProvider) Name() string { return "none" }

// Complete implements [Provider]; it always fails with [ErrNotConfigured].
func (noneProvider) Complete(context.Context, Request) (*Response, error) {
	return nil, fmt.Errorf("llm: complete: %w", &Error{Kind: KindNotConfigured, Provider: "none", Err: ErrNotConfigured})
}

// maxTokens applies the adapter default to a zero Request.MaxTokens.
func maxTokens(req Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return defaultMaxTokens
}

// idleConnsPerHost is how many idle connections to the model's host a
// client keeps: every turn in flight may be calling the model at once, and
// net/http's default keeps 2, so past two concurrent calls each call that
// ends closes its connection and the next dials a new one (a profile of
// 1,000 turns in flight spent 5% of its CPU dialling).
const idleConnsPerHost = 256

// pooledTransport is net/http's default transport keeping
// idleConnsPerHost idle connections per host.
func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idleConnsPerHost
	t.MaxIdleConnsPerHost = idleConnsPerHost
	return t
}
