package app

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// linearWorld is `weft serve` running in-process against fake Linear and
// LLM servers, driven by signed webhooks shaped as Linear sends them.
type linearWorld struct {
	base   string
	store  *db.Store
	llm    *llmtest.Server
	linear *lineartest.Server
	signer lineartest.Signer
	// logs is what weft serve logged.
	logs *logtest.Buffer
}

func newLinearWorld(t *testing.T) *linearWorld {
	t.Helper()
	return newLinearWorldWith(t, nil, nil)
}

// newLinearWorldWith is newLinearWorld with more environment, and spans
// going to spans (nil: tracing off, as without an OTLP endpoint).
func newLinearWorldWith(t *testing.T, more map[string]string, spans sdktrace.SpanExporter) *linearWorld {
	t.Helper()
	const token, secret = "lin_api_e2e", "whsec-e2e"
	url := dbtest.URL(t)
	w := &linearWorld{llm: llmtest.NewServer(t), linear: lineartest.NewServer(t), signer: lineartest.Signer{Secret: []byte(secret)},
		logs: &logtest.Buffer{}}
	w.linear.AddToken(token, lineartest.OrganizationID)
	addr := servetest.Addr(t)
	vars := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": addr, "WEFT_LOG_LEVEL": "warn",
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.llm.OpenAIBaseURL(),
		"LINEAR_WEBHOOK_SECRET": secret, "LINEAR_ACCESS_TOKEN": token, "LINEAR_API_URL": w.linear.URL(),
	}
	maps.Copy(vars, more)
	cfg, err := LoadConfig(env(vars))
	require.NoError(t, err)
	cfg.Tracing.exporter = spans
	w.base = servetest.Serve(t, addr, func(ctx context.Context) error {
		a, err := New(ctx, cfg, NewLogger(w.logs, cfg.LogLevel))
		if err != nil {
			return err
		}
		return a.Run(ctx)
	})
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	w.store = store
	return w
}

func (w *linearWorld) deliver(t *testing.T, d lineartest.Delivery) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/linear", bytes.NewReader(d.Body))
	require.NoError(t, err)
	req.Header = d.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// mention opens a session as a mention in a comment does.
func (w *linearWorld) mention(t *testing.T, prompt string) lineartest.SessionOpts {
	t.Helper()
	d, opts := w.signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), PromptContext: prompt})
	w.linear.AddSession(opts.SessionID, opts.IssueID)
	w.deliver(t, d)
	return opts
}

// activities waits until the session shows n activities and returns them.
func (w *linearWorld) activities(t *testing.T, session string, n int) []lineartest.Activity {
	t.Helper()
	var acts []lineartest.Activity
	require.Eventually(t, func() bool {
		acts = w.linear.Activities(session)
		return len(acts) >= n
	}, 20*time.Second, 10*time.Millisecond, "session never showed %d activities", n)
	return acts
}

func (w *linearWorld) thread(t *testing.T, session string) *thread.Thread {
	t.Helper()
	th, err := w.store.ThreadByLinearSession(context.Background(), session)
	require.NoError(t, err)
	return th
}

func TestLinearSessionEndToEnd(t *testing.T) {
	t.Parallel()
	w := newLinearWorld(t)
	w.llm.Enqueue(
		llmtest.Reply{Text: "Let me note the convention first.", ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"redirects","content":"login redirects go through /auth"}`}}},
		llmtest.Reply{Text: "The redirect loses the return URL; fix it in /auth."},
	)
	s := w.mention(t, "Why does the login redirect lose the return URL?")

	acts := w.activities(t, s.SessionID, 4)
	require.Equal(t, []string{"thought", "thought", "action", "response"}, lineartest.Types(acts))
	require.Equal(t, "save_memory", acts[2].Action)
	require.Equal(t, "The redirect loses the return URL; fix it in /auth.", acts[3].Body)
	require.Contains(t, w.llm.Requests()[0].Messages[0].Content, "Why does the login redirect lose the return URL?")

	// A follow-up carries the whole conversation so far to the model.
	w.llm.Enqueue(llmtest.Reply{Text: "Yes: /auth/callback."})
	w.deliver(t, w.signer.Prompted(s, uuid.NewString(), "Which file exactly?"))
	acts = w.activities(t, s.SessionID, 5)
	require.Equal(t, "Yes: /auth/callback.", acts[4].Body)
	var contents []string
	for _, m := range w.llm.Requests()[2].Messages {
		contents = append(contents, m.Content)
	}
	joined := strings.Join(contents, "\n")
	for _, want := range []string{"Why does the login redirect lose the return URL?", "The redirect loses the return URL; fix it in /auth.", "Which file exactly?"} {
		require.Contains(t, joined, want)
	}
	att, err := w.store.LinearAttachment(context.Background(), w.thread(t, s.SessionID).ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionComplete, att.SessionStatus)
}

func TestLinearElicitationAndAnswer(t *testing.T) {
	t.Parallel()
	w := newLinearWorld(t)
	w.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ask_user", Arguments: `{"question":"Which environment?","options":["staging","production"]}`}}},
		llmtest.Reply{Text: "Checking staging."},
	)
	s := w.mention(t, "Is the deploy healthy?")
	acts := w.activities(t, s.SessionID, 2)
	require.Equal(t, "elicitation", acts[1].Type)
	require.Equal(t, "select", acts[1].Signal)
	require.Equal(t, []string{"staging", "production"}, acts[1].Options)
	th := w.thread(t, s.SessionID)
	require.Eventually(t, func() bool {
		cur, err := w.store.Thread(context.Background(), th.ID)
		require.NoError(t, err)
		return cur.Status == thread.StatusWaiting && cur.WaitingReason == thread.WaitingClarification
	}, 10*time.Second, 10*time.Millisecond)

	w.deliver(t, w.signer.Prompted(s, uuid.NewString(), "staging"))
	acts = w.activities(t, s.SessionID, 3)
	require.Equal(t, "response", acts[2].Type)
	msgs := w.llm.Requests()[1].Messages
	require.Equal(t, "staging", msgs[len(msgs)-1].Content)
}

func TestLinearStopMidTurn(t *testing.T) {
	t.Parallel()
	w := newLinearWorld(t)
	release := w.llm.Block()
	defer release()
	s := w.mention(t, "Refactor the whole auth module")
	select {
	case <-w.llm.Arrived():
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called")
	}
	w.deliver(t, w.signer.Stop(s, uuid.NewString()))
	th := w.thread(t, s.SessionID)
	require.Eventually(t, func() bool {
		cur, err := w.store.Thread(context.Background(), th.ID)
		require.NoError(t, err)
		return cur.Status == thread.StatusAborted && cur.LeaseOwner == ""
	}, 20*time.Second, 10*time.Millisecond)
	release()
	acts := w.activities(t, s.SessionID, 2)
	require.Equal(t, []string{"thought", "response"}, lineartest.Types(acts), "the ack, then the stop's confirmation, and nothing from the cancelled call")
	chain, err := w.store.Stitches(context.Background(), th.ID, db.StitchPage{})
	require.NoError(t, err)
	for _, st := range chain {
		require.NotEqual(t, thread.StitchLLMCall, st.Type)
	}
}

func TestLinearRateLimitAndServerErrorStorm(t *testing.T) {
	t.Parallel()
	w := newLinearWorld(t)
	w.linear.Fail("agentActivityCreate", 3, fakekit.RateLimited(20*time.Millisecond))
	w.linear.Fail("agentActivityCreate", 3, fakekit.Fail(http.StatusBadGateway))
	w.linear.Fail("agentActivityCreate", 2, fakekit.Fail(http.StatusBadGateway).AfterApplying())
	w.llm.Enqueue(
		llmtest.Reply{Text: "Looking.", ToolCalls: []llmtest.ToolCall{{Name: "read_memory", Arguments: `{}`}}},
		llmtest.Reply{Text: "All good."},
	)
	s := w.mention(t, "Anything to remember?")
	th := w.thread(t, s.SessionID)
	var rows []thread.Outbox
	require.Eventually(t, func() bool {
		var err error
		rows, err = w.store.ThreadOutbox(context.Background(), th.ID)
		require.NoError(t, err)
		if len(rows) < 4 {
			return false
		}
		for _, r := range rows {
			if !r.Status.Final() {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "every activity was eventually settled")
	// The answer is delivered; a progress post still failing when it was
	// ready was dropped rather than hold it up, never posted after it.
	var sent []string
	for _, r := range rows {
		if r.Kind == thread.OutboxResponse || r.Status != thread.OutboxDropped {
			require.Equal(t, thread.OutboxSent, r.Status, "%s", r.Kind)
			sent = append(sent, string(r.Kind))
		}
	}
	acts := w.linear.Activities(s.SessionID)
	require.Equal(t, sent, lineartest.Types(acts), "each activity sent exactly once, in order")
	require.Equal(t, "response", sent[len(sent)-1])
	ids := map[string]bool{}
	for _, a := range acts {
		require.False(t, ids[a.ID], "activity %s posted twice", a.ID)
		ids[a.ID] = true
	}
}
