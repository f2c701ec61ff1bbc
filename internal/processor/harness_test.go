package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// harness is a processor working jobs against a fresh database, the fake
// LLM through the real OpenAI adapter, and a recording sender.
type harness struct {
	pool    *pgxpool.Pool
	store   *db.Store
	llm     *llmtest.Server
	model   *watchedProvider
	proc    *processor.Processor
	ingest  *ingest.Ingester
	sender  *recordingSender
	toolRan chan string
}

func newHarness(t *testing.T, opts ...func(*agent.Runner, *db.Store)) *harness {
	t.Helper()
	return newHarnessConfig(t, nil, opts...)
}

// newHarnessConfig is newHarness with config changing the processor's
// configuration before it starts.
func newHarnessConfig(t *testing.T, config func(*processor.Config), opts ...func(*agent.Runner, *db.Store)) *harness {
	t.Helper()
	return newHarnessProvider(t, "openai", config, opts...)
}

// newHarnessProvider is newHarnessConfig with the model reached through the
// SDK of provider ("openai" or "anthropic").
func newHarnessProvider(t *testing.T, provider string, config func(*processor.Config), opts ...func(*agent.Runner, *db.Store)) *harness {
	t.Helper()
	return newHarnessSending(t, provider, nil, config, opts...)
}

// newHarnessSending is newHarnessProvider posting Linear rows through
// linear rather than the recording sender, when linear is not nil.
func newHarnessSending(t *testing.T, provider string, linear processor.Sender, config func(*processor.Config), opts ...func(*agent.Runner, *db.Store)) *harness {
	t.Helper()
	logger := dbtest.Logger(t)
	pool := dbtest.NewPool(t)
	store := db.New(pool, logger)
	fake := llmtest.NewServer(t)
	base := fake.OpenAIBaseURL()
	if provider == "anthropic" {
		base = fake.AnthropicBaseURL()
	}
	model, err := llm.New(llm.Config{Provider: provider, BaseURL: base, APIKey: "test", MaxRetries: 2, MinBackoff: time.Millisecond})
	require.NoError(t, err)
	h := &harness{pool: pool, store: store, llm: fake, model: &watchedProvider{Provider: model}, sender: newRecordingSender(), toolRan: make(chan string, 100)}

	registry, err := tools.NewRegistry(append(tools.Memory(store),
		tools.Tool{Name: "lookup", Description: "look something up", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
			Handler: func(ctx context.Context, c tools.Call) (string, error) {
				h.toolRan <- string(c.Arguments)
				if strings.Contains(string(c.Arguments), "fail") {
					return "", errors.New("lookup service unavailable")
				}
				return "found: the build is red because of TestFlaky", nil
			}},
	)...)
	require.NoError(t, err)
	runner := &agent.Runner{LLM: h.model, Model: "test-model", Tools: registry, MaxSteps: 6, Logger: logger}
	for _, o := range opts {
		o(runner, store)
	}
	senders := map[thread.Platform]processor.Sender{thread.PlatformLinear: h.sender, thread.PlatformDiscord: h.sender}
	if linear != nil {
		senders[thread.PlatformLinear] = linear
	}
	cfg := processor.Config{
		Workers: true, Heartbeat: 20 * time.Millisecond, LeaseWait: 20 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
		DeliveryBackoff: 5 * time.Millisecond, TurnBackoff: 5 * time.Millisecond, SweepInterval: 100 * time.Millisecond,
		ReclaimInterval: 50 * time.Millisecond,
	}
	if config != nil {
		config(&cfg)
	}
	h.proc, err = processor.New(processor.Deps{Pool: pool, Store: store, Runner: runner, Senders: senders, Config: cfg, Logger: logger})
	require.NoError(t, err)
	require.NoError(t, h.proc.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, h.proc.Stop(ctx))
	})
	h.ingest = ingest.New(ingest.Deps{Store: store, Jobs: h.proc.Inserter(), Logger: logger})
	return h
}

// linearThread starts an interactive thread whose input came from Linear, so
// its outputs go to the recording sender.
func (h *harness) linearThread(t *testing.T, prompt string) *thread.Thread {
	t.Helper()
	th, err := h.ingest.StartThread(context.Background(), h.ingest.Builder().WithGoal("help in Linear").
		InteractiveLinear(dbtest.LinearAttachment()).
		WithInitialPrompt(thread.Stitch{Content: prompt, Source: thread.PlatformLinear, ExternalID: uuid.NewString()}))
	require.NoError(t, err)
	return th
}

// waitRan waits until a job of kind has finished, as the leader's periodic
// jobs have once its leadership settled: work a test strands after that is
// found by a later run.
func (h *harness) waitRan(t *testing.T, kind string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, h.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, kind).Scan(&n))
		return n > 0
	}, 20*time.Second, 10*time.Millisecond, "no %s job ran", kind)
}

// waitStatus waits until the thread reaches status.
func (h *harness) waitStatus(t *testing.T, id uuid.UUID, status thread.Status) *thread.Thread {
	t.Helper()
	var th *thread.Thread
	require.Eventually(t, func() bool {
		var err error
		th, err = h.store.Thread(context.Background(), id)
		require.NoError(t, err)
		return th.Status == status && th.LeaseOwner == ""
	}, 20*time.Second, 10*time.Millisecond, "thread never reached %s", status)
	return th
}

// waitSent waits until the thread has at least n outbox rows and every one
// is sent, failed or dropped.
func (h *harness) waitSent(t *testing.T, id uuid.UUID, n int) []thread.Outbox {
	t.Helper()
	var rows []thread.Outbox
	require.Eventually(t, func() bool {
		var err error
		rows, err = h.store.ThreadOutbox(context.Background(), id)
		require.NoError(t, err)
		if len(rows) < n {
			return false
		}
		for _, o := range rows {
			if !o.Status.Final() {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond)
	return rows
}

func (h *harness) chain(t *testing.T, id uuid.UUID) []thread.Stitch {
	t.Helper()
	all, err := h.store.Stitches(context.Background(), id, db.StitchPage{})
	require.NoError(t, err)
	return all
}

func types(chain []thread.Stitch) []thread.StitchType {
	out := make([]thread.StitchType, len(chain))
	for i, s := range chain {
		out[i] = s.Type
	}
	return out
}

// watchedProvider counts model calls in flight per thread-independent total,
// to prove turns of one thread never overlap.
type watchedProvider struct {
	llm.Provider
	inFlight, maxInFlight atomic.Int32
	panicOn               string
}

func (w *watchedProvider) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	n := w.inFlight.Add(1)
	defer w.inFlight.Add(-1)
	for {
		m := w.maxInFlight.Load()
		if n <= m || w.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if w.panicOn != "" {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, w.panicOn) {
				panic("poisoned input")
			}
		}
	}
	return w.Provider.Complete(ctx, req)
}

// recordingSender stands in for a platform that deduplicates by the outbox
// id, as Linear (activity id) and Discord (nonce) do.
type recordingSender struct {
	mu    sync.Mutex
	posts map[uuid.UUID]thread.Outbox // what the platform shows
	order []uuid.UUID
	sends int
	// failFirst fails that many sends before any succeeds; lose makes a
	// failed send post anyway (the answer was lost, not the request).
	failFirst int
	lose      bool
	permanent error
	// refuse is a kind of post the platform refuses for good.
	refuse thread.OutboxKind
	// refuseEchoes refuses every echo (thread.OutboxBody.Echo) for good.
	refuseEchoes bool
}

func newRecordingSender() *recordingSender {
	return &recordingSender{posts: map[uuid.UUID]thread.Outbox{}}
}

func (s *recordingSender) Send(_ context.Context, o thread.Outbox) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends++
	if s.permanent != nil {
		return "", s.permanent
	}
	if o.Kind == s.refuse {
		return "", fmt.Errorf("%w: %s refused", thread.ErrInvalid, o.Kind)
	}
	if b, _ := o.Content(); s.refuseEchoes && b.Echo {
		return "", fmt.Errorf("%w: echo refused", thread.ErrInvalid)
	}
	if s.failFirst > 0 {
		s.failFirst--
		if s.lose {
			s.post(o)
		}
		return "", errors.New("503 service unavailable")
	}
	s.post(o)
	return "ext-" + o.ID.String(), nil
}

func (s *recordingSender) post(o thread.Outbox) {
	if _, ok := s.posts[o.ID]; !ok {
		s.posts[o.ID] = o
		s.order = append(s.order, o.ID)
	}
}

// kinds lists what the platform shows for a thread, in posting order.
func (s *recordingSender) kinds(threadID uuid.UUID) []thread.OutboxKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []thread.OutboxKind
	for _, id := range s.order {
		if o := s.posts[id]; o.ThreadID == threadID {
			out = append(out, o.Kind)
		}
	}
	return out
}
