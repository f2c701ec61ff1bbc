package llm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// providers is the protocol axis every adapter test runs over.
func providers() []string { return []string{openAIName, anthropicName} }

// fixture is a real adapter pointed at a fresh fake.
type fixture struct {
	srv   *llmtest.Server
	p     Provider
	waits *waitLog
}

// setup builds the named provider against a new fake, with a millisecond
// backoff so retries cost nothing; mod adjusts the Config first.
func setup(t *testing.T, provider string, mod ...func(*Config)) fixture {
	t.Helper()
	srv := llmtest.NewServer(t)
	cfg := Config{Provider: provider, APIKey: "test-key", MinBackoff: time.Millisecond, MaxRetries: 2}
	cfg.BaseURL = srv.AnthropicBaseURL()
	if provider == openAIName {
		cfg.BaseURL = srv.OpenAIBaseURL()
	}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := New(cfg)
	require.NoError(t, err)
	require.Equal(t, provider, p.Name())

	waits := &waitLog{}
	r := retrierOf(t, p)
	sleepFunc := r.wait
	r.wait = func(ctx context.Context, d time.Duration) error {
		waits.add(d)
		return sleepFunc(ctx, d)
	}
	return fixture{srv: srv, p: p, waits: waits}
}

func retrierOf(t *testing.T, p Provider) *retrier {
	t.Helper()
	switch p := p.(type) {
	case *openAIProvider:
		return p.retry
	case *anthropicProvider:
		return p.retry
	}
	t.Fatalf("no retrier in %T", p)
	return nil
}

// waitLog records the delays the retry policy chose.
type waitLog struct {
	mu sync.Mutex
	ds []time.Duration
}

func (w *waitLog) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ds = append(w.ds, d)
}

func (w *waitLog) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.ds...)
}

// hello is the smallest valid request.
func hello() Request {
	return Request{Model: "test-model", Messages: []Message{{Role: RoleUser, Content: "hi"}}}
}

// requireError asserts err is an *Error of kind from provider and returns it.
func requireError(t *testing.T, err error, provider string, kind ErrorKind) *Error {
	t.Helper()
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, kind, e.Kind, "error: %v", err)
	require.Equal(t, provider, e.Provider)
	require.Contains(t, err.Error(), provider+": complete: ")
	return e
}
