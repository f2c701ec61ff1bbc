package agent

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
)

// journal is the order things happened in: the partials' calls and the
// store's writes, in one list.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, fmt.Sprintf(format, args...))
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.entries...)
}

// journalPartials records what the turn hands over.
type journalPartials struct{ j *journal }

func (p journalPartials) Open(_ context.Context, _ *thread.Thread, after int64) PartialAnswer {
	p.j.add("open after %d", after)
	return journalAnswer(p)
}

type journalAnswer struct{ j *journal }

func (a journalAnswer) Text(text string) { a.j.add("text %q", text) }
func (a journalAnswer) Close()           { a.j.add("close") }

// memStore appends each step's stitches to the chain, numbering them.
type memStore struct{ j *journal }

func (s memStore) Record(_ context.Context, _ uuid.UUID, chain []thread.Stitch, e thread.Effects, _ bool) ([]thread.Stitch, error) {
	for _, st := range e.Stitches {
		st.Seq = chain[len(chain)-1].Seq + 1
		chain = append(chain, st)
		s.j.add("record %s %d", st.Type, st.Seq)
	}
	return chain, nil
}

func streamingRunner(t *testing.T, partials Partials) (*Runner, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t)
	p, err := llm.New(llm.Config{Provider: "anthropic", APIKey: "k", BaseURL: srv.AnthropicBaseURL(), MinBackoff: time.Millisecond, MaxRetries: 2})
	require.NoError(t, err)
	return &Runner{LLM: p, Model: "m", Logger: logtest.New(t), Partials: partials}, srv
}

func conversationThread() *thread.Thread {
	return &thread.Thread{ID: uuid.New(), Type: thread.TypeInteractive, Status: thread.StatusRunning}
}

// TestTurnForwardsPartialAnswers streams a tool call and then an answer
// whose first attempt is cut: each model call opens its partial answer
// after the chain it answers, hands over the whole text so far (starting
// over on the retry), and closes only once its outcome is recorded.
func TestTurnForwardsPartialAnswers(t *testing.T) {
	t.Parallel()
	j := &journal{}
	r, srv := streamingRunner(t, journalPartials{j})
	srv.Enqueue(
		llmtest.Reply{Text: "looking", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "lookup"}}},
		llmtest.Reply{Text: "lost words here", CutAfter: 2},
		llmtest.Reply{Text: "the answer"},
	)

	err := r.Turn(t.Context(), conversationThread(), memStore{j}, chain(system, prompt))
	require.NoError(t, err)
	require.Equal(t, []string{
		"open after 2",
		`text "looking"`,
		"record llm_call 3",
		"record agent_thought 4",
		"close",
		"record tool_call 5", // no tool named lookup: the error is the result
		"open after 5",
		`text "lost "`,
		`text "lost words "`,
		`text "the "`,
		`text "the answer"`,
		"record llm_call 6",
		"close",
	}, j.all())
	for _, req := range srv.Requests() {
		require.True(t, req.Stream)
	}
}

// TestTurnWithoutPartialsDoesNotStream keeps plain calls when nothing
// listens.
func TestTurnWithoutPartialsDoesNotStream(t *testing.T) {
	t.Parallel()
	j := &journal{}
	r, srv := streamingRunner(t, nil)
	srv.Enqueue(llmtest.Reply{Text: "the answer"})
	require.NoError(t, r.Turn(t.Context(), conversationThread(), memStore{j}, chain(system, prompt)))
	require.Equal(t, []string{"record llm_call 3"}, j.all())
	require.False(t, srv.Requests()[0].Stream)
}

// TestTurnClosesPartialOfFailedCall closes the partial answer of a call
// that failed for good once the error that ends the turn is recorded.
func TestTurnClosesPartialOfFailedCall(t *testing.T) {
	t.Parallel()
	j := &journal{}
	r, srv := streamingRunner(t, journalPartials{j})
	srv.Enqueue(llmtest.Reply{Status: 401})
	require.NoError(t, r.Turn(t.Context(), conversationThread(), memStore{j}, chain(system, prompt)))
	require.Equal(t, []string{"open after 2", "record error 3", "close"}, j.all())
}

// TestTurnCutStreamIsUnavailable cuts every stream midway: the call's own
// retries spent, the turn handles it as any unavailable model (the busy
// notice recorded, an *Unavailable returned for a later retry within the
// window), its partial text closed and nothing of it recorded.
func TestTurnCutStreamIsUnavailable(t *testing.T) {
	t.Parallel()
	j := &journal{}
	r, srv := streamingRunner(t, journalPartials{j})
	srv.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "cut short again", CutAfter: 1} })

	err := r.Turn(t.Context(), conversationThread(), memStore{j}, chain(system, prompt))
	var un *Unavailable
	require.ErrorAs(t, err, &un)
	var e *llm.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, llm.KindMalformed, e.Kind)
	require.Equal(t, []string{
		"open after 2",
		`text "cut "`, `text "cut "`, `text "cut "`, // each attempt starts over
		"close",
		"record agent_thought 3", // the busy notice
	}, j.all())
	require.Equal(t, 3, srv.Calls())
}
