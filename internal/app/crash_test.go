package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// child is a `weft serve` subprocess.
type child struct {
	cmd    *exec.Cmd
	stderr *logtest.Buffer
	exited chan struct{} // closed when the process is gone
	err    error         // its exit status, once exited
}

func startWeft(t *testing.T, envv map[string]string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "WEFT_TEST_AS_WEFT=1")
	for k, v := range envv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{cmd: cmd, stderr: &logtest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	require.NoError(t, cmd.Start())
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exited
		if t.Failed() {
			t.Logf("weft serve stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// waitLogged waits until `weft serve` has logged text.
func (c *child) waitLogged(t *testing.T, text string) {
	t.Helper()
	err := c.stderr.Wait(servetest.Waiting(t), func(s string) bool { return strings.Contains(s, text) })
	require.NoError(t, err, "weft serve never logged %q", text)
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	<-c.exited
}

func hasToolResult(r llmtest.Request) bool {
	for _, m := range r.Messages {
		if m.Role == "tool" {
			return true
		}
	}
	return false
}

// TestCrashMidTurnResumesWithoutRepeatingRecordedCalls kills `weft serve`
// with SIGKILL while the turn's second LLM call is in flight, after the
// first call and its tool ran and were recorded. A new process finishes the
// thread, and the recorded call is never made again.
func TestCrashMidTurnResumesWithoutRepeatingRecordedCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	fake := llmtest.NewServer(t)
	var restarted atomic.Bool
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		switch {
		case !hasToolResult(r):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"crash","content":"noted once"}`}}}
		case !restarted.Load():
			return llmtest.Reply{Delay: time.Hour} // in flight until the process dies
		default:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"survived"}`}}}
		}
	})
	weftEnv := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms", "WEFT_LOG_LEVEL": "debug",
	}

	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)
	th := createThread(t, url, "Remember something, then finish")

	// Wait for the second call: the first call and its tool are recorded.
	waitRequest(t, fake, hasToolResult)
	first.kill(t)
	restarted.Store(true)
	startWeft(t, weftEnv)

	done := waitFinished(t, store, th)
	require.Equal(t, thread.StatusCompleted, done.Status)
	require.JSONEq(t, `{"result":"survived"}`, string(done.Result))

	chain, err := store.Stitches(ctx, th, db.StitchPage{})
	require.NoError(t, err)
	var calls, tools int
	for _, s := range chain {
		switch s.Type {
		case thread.StitchLLMCall:
			calls++
		case thread.StitchToolCall:
			tools++
		}
	}
	require.Equal(t, 2, calls, "one recorded call per step")
	require.Equal(t, 1, tools, "the recorded tool did not run again")
	var firstCalls int
	for _, r := range fake.Requests() {
		if !hasToolResult(r) {
			firstCalls++
		}
	}
	require.Equal(t, 1, firstCalls, "the recorded LLM call was made again")
}

// TestSIGTERMDrainsTurn stops `weft serve` with SIGTERM while an LLM call is
// in flight: the process finishes the step, records it, and exits cleanly.
func TestSIGTERMDrainsTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Delay: 300 * time.Millisecond, ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"drained"}`}}}
	})
	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	c := startWeft(t, map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_SHUTDOWN_TIMEOUT": "30s",
	})
	th := createThread(t, url, "finish during shutdown")
	waitRequest(t, fake, func(llmtest.Request) bool { return true })
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-c.exited:
		require.NoError(t, c.err, c.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("weft serve did not exit within the shutdown timeout")
	}
	got, err := store.Thread(ctx, th)
	require.NoError(t, err)
	require.Equal(t, thread.StatusCompleted, got.Status, "the in-flight step finished before exit")
	require.Empty(t, got.LeaseOwner)
}

// createThread starts an autonomous thread through an app that only
// enqueues, as `weft thread create --detach` does.
func createThread(t *testing.T, url, goal string) uuid.UUID {
	t.Helper()
	in := enqueuer(t, url).Ingester()
	th, err := in.StartThread(context.Background(), in.Builder().WithGoal(goal).Autonomous().
		WithInitialPrompt(thread.Stitch{Content: goal, Source: thread.PlatformCLI}))
	require.NoError(t, err)
	return th.ID
}

func waitRequest(t *testing.T, fake *llmtest.Server, match func(llmtest.Request) bool) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case r := <-fake.Arrived():
			if match(r) {
				return
			}
		case <-timeout:
			t.Fatal("the expected LLM call never arrived")
		}
	}
}

// waitFinished waits, up to the two minutes weft promises for resuming an
// interrupted thread, for the thread to finish.
func waitFinished(t *testing.T, store *db.Store, id uuid.UUID) *thread.Thread {
	t.Helper()
	var th *thread.Thread
	require.Eventually(t, func() bool {
		var err error
		th, err = store.Thread(context.Background(), id)
		require.NoError(t, err)
		return th.Status.Final() && th.LeaseOwner == ""
	}, 2*time.Minute, 50*time.Millisecond, fmt.Sprintf("thread %s did not finish", id))
	return th
}

// TestCrashBeforePostPostsOnce kills `weft serve` with SIGKILL after the
// answer's stitch and outbox row committed, while the post to Linear is in
// flight. A new process sends it, and Linear shows it exactly once.
func TestCrashBeforePostPostsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	fake := llmtest.NewServer(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "Here is the answer."} })
	lin := lineartest.NewServer(t)
	lin.AddToken("lin_api_crash", "org-1")
	lin.Fail("agentActivityCreate", 1, fakekit.Slow(time.Hour)) // the first post hangs until the process dies
	weftEnv := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"LINEAR_ACCESS_TOKEN": "lin_api_crash", "LINEAR_API_URL": lin.URL(),
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)

	meta := dbtest.LinearAttachment()
	lin.AddSession(meta.SessionID, meta.IssueID)
	in := enqueuer(t, url).Ingester()
	th, err := in.StartThread(ctx, in.Builder().WithGoal("answer in Linear").InteractiveLinear(meta).
		WithInitialPrompt(thread.Stitch{Content: "What is the answer?", Source: thread.PlatformLinear, ExternalID: meta.SessionID}))
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, th.ID)
		require.NoError(t, err)
		return len(rows) == 1 && rows[0].Status == thread.OutboxSending
	}, time.Minute, 20*time.Millisecond, "the post never started")
	first.kill(t)
	startWeft(t, weftEnv)

	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, th.ID)
		require.NoError(t, err)
		return rows[0].Status == thread.OutboxSent
	}, 2*time.Minute, 50*time.Millisecond, "the post was never completed")
	acts := lin.Activities(meta.SessionID)
	require.Len(t, acts, 1, "exactly one post")
	require.Equal(t, "response", acts[0].Type)
	require.Equal(t, "Here is the answer.", acts[0].Body)
	require.Equal(t, 1, fake.Calls(), "the recorded answer was not asked for again")
}

// TestSIGTERMHandsWorkOver stops `weft serve` with SIGTERM while a turn's
// model call and a Linear post are in flight and outlast the shutdown
// timeout. The stopping replica hands both over: the thread with no lease
// and a turn job due now, the post released with a delivery job due now.
// A second replica then finishes both, with leases too long and a sweep too
// rare to be what carried them.
func TestSIGTERMHandsWorkOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	fake := llmtest.NewServer(t)
	var stopped atomic.Bool
	hangs := func(r llmtest.Request) bool {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "hang on") {
				return true
			}
		}
		return false
	}
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		switch {
		case hangs(r) && !stopped.Load():
			return llmtest.Reply{Delay: time.Hour} // in flight until the process gives up on it
		case hangs(r):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"handed over"}`}}}
		}
		return llmtest.Reply{Text: "Here is the answer."}
	})
	lin := lineartest.NewServer(t)
	lin.AddToken("lin_api_term", "org-1")
	lin.Fail("agentActivityCreate", 1, fakekit.Slow(time.Hour)) // the first post hangs until the process gives up on it
	weftEnv := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": servetest.Addr(t), "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "WEFT_LEASE_TTL": "5m", "WEFT_SWEEP_INTERVAL": "1h", "WEFT_SHUTDOWN_TIMEOUT": "1s",
		"LINEAR_ACCESS_TOKEN": "lin_api_term", "LINEAR_API_URL": lin.URL(),
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)

	turning := createThread(t, url, "hang on, then finish")
	meta := dbtest.LinearAttachment()
	lin.AddSession(meta.SessionID, meta.IssueID)
	in := enqueuer(t, url).Ingester()
	posting, err := in.StartThread(ctx, in.Builder().WithGoal("answer in Linear").InteractiveLinear(meta).
		WithInitialPrompt(thread.Stitch{Content: "What is the answer?", Source: thread.PlatformLinear, ExternalID: meta.SessionID}))
	require.NoError(t, err)
	waitRequest(t, fake, hangs)
	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, posting.ID)
		require.NoError(t, err)
		return len(rows) == 1 && rows[0].Status == thread.OutboxSending
	}, time.Minute, 20*time.Millisecond, "the post never started")

	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-first.exited:
		require.NoError(t, first.err, first.stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("weft serve did not exit after SIGTERM")
	}
	stopped.Store(true)

	// Nothing is left owned by the replica that stopped.
	th, err := store.Thread(ctx, turning)
	require.NoError(t, err)
	require.Empty(t, th.LeaseOwner, "the lease was given up")
	due := func(kind, key string, id uuid.UUID) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE kind = $1 AND args->>$2 = $3 AND state = 'available' AND scheduled_at <= now()`, kind, key, id.String()).Scan(&n))
		return n
	}
	require.Equal(t, 1, due("weft_turn", "thread_id", turning), "a turn job is due now")
	rows, err := store.ThreadOutbox(ctx, posting.ID)
	require.NoError(t, err)
	require.Equal(t, thread.OutboxPending, rows[0].Status, "the post was released")
	require.False(t, rows[0].NextAttemptAt.After(time.Now()), "due now")
	require.Equal(t, 1, due("weft_delivery", "outbox_id", rows[0].ID), "a delivery job is due now")

	startWeft(t, weftEnv)
	done := waitFinished(t, store, turning)
	require.Equal(t, thread.StatusCompleted, done.Status)
	require.JSONEq(t, `{"result":"handed over"}`, string(done.Result))
	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, posting.ID)
		require.NoError(t, err)
		return rows[0].Status == thread.OutboxSent
	}, time.Minute, 50*time.Millisecond, "the post was never completed")
	require.Len(t, lin.Activities(meta.SessionID), 1, "exactly one post")
}
