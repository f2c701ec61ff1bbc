package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMultiStepToolTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.Enqueue(
		llmtest.Reply{Text: "Let me look that up.", ToolCalls: []llmtest.ToolCall{{Name: "lookup", Arguments: `{"q":"nightly build"}`}}, InputTokens: 50, OutputTokens: 10},
		llmtest.Reply{Text: "The nightly build is red because of TestFlaky.", InputTokens: 80, OutputTokens: 12},
	)
	th := h.linearThread(t, "Why is the nightly build red?")
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	h.waitSent(t, th.ID, 3)

	chain := h.chain(t, th.ID)
	require.Equal(t, []thread.StitchType{
		thread.StitchSystemPrompt, thread.StitchInitialPrompt,
		thread.StitchLLMCall, thread.StitchAgentThought, thread.StitchToolCall,
		thread.StitchLLMCall,
	}, types(chain))
	call := chain[2]
	require.Equal(t, 50, call.InputTokens)
	require.Equal(t, 10, call.OutputTokens)
	require.NotEmpty(t, call.LLMRequest)
	tool := chain[4]
	require.Equal(t, "lookup", tool.ToolName)
	require.Contains(t, tool.Content, "TestFlaky")
	require.False(t, tool.ToolError)
	require.Equal(t, "The nightly build is red because of TestFlaky.", chain[5].Content)

	// The second call saw the tool's result, answering the first call's id.
	reqs := h.llm.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "tool", last.Role)
	require.Contains(t, last.Content, "TestFlaky")
	require.Contains(t, reqs[0].Tools, "lookup")
	require.Contains(t, reqs[0].Tools, "ask_user")
	require.NotContains(t, reqs[0].Tools, "complete_thread", "an interactive thread has no result to complete")

	require.Equal(t, []thread.OutboxKind{thread.OutboxThought, thread.OutboxAction, thread.OutboxResponse}, h.sender.kinds(th.ID))
	got, err := h.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.WaitingIdle, got.WaitingReason)
	att, err := h.store.LinearAttachment(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionComplete, att.SessionStatus)
}

func TestToolErrorGoesBackToTheModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "lookup", Arguments: `{"q":"fail"}`}, {Name: "no_such_tool", Arguments: `{}`}}},
		llmtest.Reply{Text: "The lookup service is down."},
	)
	th := h.linearThread(t, "look it up")
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	chain := h.chain(t, th.ID)
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt,
		thread.StitchLLMCall, thread.StitchToolCall, thread.StitchToolCall, thread.StitchLLMCall}, types(chain))
	require.True(t, chain[3].ToolError)
	require.Contains(t, chain[3].Content, "lookup service unavailable")
	require.True(t, chain[4].ToolError)
	msgs := h.llm.Requests()[1].Messages
	require.Contains(t, msgs[len(msgs)-2].Content, "lookup service unavailable")
	require.Contains(t, msgs[len(msgs)-1].Content, `no tool named "no_such_tool"`)
}

func TestAutonomousThreadCompletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"standup","content":"ship on fridays"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"standup written"}`}}},
	)
	th, err := h.ingest.StartThread(context.Background(), h.ingest.Builder().WithGoal("Write the standup").Autonomous())
	require.NoError(t, err)
	done := h.waitStatus(t, th.ID, thread.StatusCompleted)
	require.JSONEq(t, `{"result":"standup written"}`, string(done.Result))
	chain := h.chain(t, th.ID)
	require.Equal(t, thread.StitchThreadResult, chain[len(chain)-1].Type)
	blocks, err := h.store.MemoryBlocks(context.Background(), thread.MemoryScope{Agent: thread.DefaultAgent})
	require.NoError(t, err)
	require.Equal(t, "ship on fridays", blocks[0].Content)
	rows, err := h.store.ThreadOutbox(context.Background(), th.ID)
	require.NoError(t, err)
	require.Empty(t, rows, "an autonomous thread has no surface")
}

func TestAskUserWaitsForAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ask_user", Arguments: `{"question":"Which branch?","options":["main","release"]}`}}},
		llmtest.Reply{Text: "Checking release."},
	)
	th := h.linearThread(t, "check the build")
	waiting := h.waitStatus(t, th.ID, thread.StatusWaiting)
	require.Equal(t, thread.WaitingClarification, waiting.WaitingReason)
	rows := h.waitSent(t, th.ID, 1)
	body, err := rows[len(rows)-1].Content()
	require.NoError(t, err)
	require.Equal(t, thread.OutboxElicitation, rows[len(rows)-1].Kind)
	require.Equal(t, []string{"main", "release"}, body.Options)

	_, err = h.ingest.AddInput(context.Background(), th.ID, thread.Stitch{Type: thread.StitchLinearActivity, Content: "release", Source: thread.PlatformLinear, ExternalID: "act-1"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return h.llm.Calls() == 2 }, 10*time.Second, 10*time.Millisecond)
	answered := h.waitStatus(t, th.ID, thread.StatusWaiting)
	require.Equal(t, thread.WaitingIdle, answered.WaitingReason)
	msgs := h.llm.Requests()[1].Messages
	require.Equal(t, "release", msgs[len(msgs)-1].Content)
	require.Equal(t, "tool", msgs[len(msgs)-2].Role, "the question's call got its result before the answer")
}

// A model that sends ask_user arguments that are not JSON, step after
// step, is told what is wrong with them; the repeats are folded into one
// action on the surface, and the turn ends failed, its error shown, rather
// than posting an action per step up to the step limit and resting waiting.
func TestRepeatedBadArgumentsFailTheTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ask_user", Arguments: `{"question": "Which bra`}}}
	})
	th := h.linearThread(t, "check the build")
	failed := h.waitStatus(t, th.ID, thread.StatusFailed)
	require.Contains(t, failed.Error, "ask_user")
	require.Equal(t, 3, h.llm.Calls(), "stopped at the third identical failure")
	for _, s := range h.chain(t, th.ID) {
		if s.Type == thread.StitchToolCall {
			require.Contains(t, s.Content, "the arguments of ask_user are not valid JSON")
			require.NotContains(t, s.Content, "no tool named")
		}
	}
	rows := h.waitSent(t, th.ID, 2)
	require.Equal(t, []thread.OutboxKind{thread.OutboxAction, thread.OutboxError}, h.sender.kinds(th.ID), "one action, then the error")
	body, err := rows[len(rows)-1].Content()
	require.NoError(t, err)
	require.Contains(t, body.Text, "not valid JSON")
}

func TestConcurrentTriggersOneTurnAtATime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "noted", Delay: 20 * time.Millisecond}
	})
	th := h.linearThread(t, "first")
	const inputs = 12
	var wg sync.WaitGroup
	for i := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.ingest.AddInput(context.Background(), th.ID, thread.Stitch{Type: thread.StitchLinearActivity,
				Content: fmt.Sprintf("message %d", i), Source: thread.PlatformLinear, ExternalID: fmt.Sprintf("act-%d", i)})
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	// Wait until the last input has been answered: the newest llm_call's
	// request ended after every input.
	require.Eventually(t, func() bool {
		chain := h.chain(t, th.ID)
		last := chain[len(chain)-1]
		cur, err := h.store.Thread(context.Background(), th.ID)
		require.NoError(t, err)
		return last.Type == thread.StitchLLMCall && cur.Status == thread.StatusWaiting && cur.LeaseOwner == ""
	}, 30*time.Second, 20*time.Millisecond)

	require.EqualValues(t, 1, h.model.maxInFlight.Load(), "two turns of one thread overlapped")
	chain := h.chain(t, th.ID)
	var inputsSeen int
	for i, s := range chain {
		require.Equal(t, int64(i+1), s.Seq)
		if i > 0 {
			require.Equal(t, chain[i-1].ID, s.PreviousID)
		}
		if s.Type == thread.StitchLinearActivity {
			inputsSeen++
		}
	}
	require.Equal(t, inputs, inputsSeen)
	// Every input reached the model: the last request holds all of them.
	reqs := h.llm.Requests()
	var inLast int
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "user" {
			inLast++
		}
	}
	require.Equal(t, inputs+1, inLast)
}

func TestInputDuringTheLastStepIsAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := h.llm.Block()
	defer release()
	h.llm.Enqueue(llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "second answer"})
	th := h.linearThread(t, "first question")
	select {
	case <-h.llm.Arrived():
	case <-time.After(10 * time.Second):
		t.Fatal("the model was never called")
	}
	// The model is answering the first question, with the answer that
	// settles the thread, when the second arrives.
	_, err := h.ingest.AddInput(context.Background(), th.ID, thread.Stitch{Type: thread.StitchLinearActivity,
		Content: "second question", Source: thread.PlatformLinear, ExternalID: "act-2"})
	require.NoError(t, err)
	release()

	require.Eventually(t, func() bool { return h.llm.Calls() == 2 }, 10*time.Second, 10*time.Millisecond)
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt, thread.StitchLinearActivity,
		thread.StitchLLMCall, thread.StitchLLMCall}, types(h.chain(t, th.ID)))
	msgs := h.llm.Requests()[1].Messages
	require.Equal(t, "second question", msgs[len(msgs)-1].Content, "the second call answers the new input")
	require.Equal(t, "first answer", msgs[len(msgs)-2].Content)
	require.EqualValues(t, 1, h.model.maxInFlight.Load())
	h.waitSent(t, th.ID, 2)
	require.Equal(t, []thread.OutboxKind{thread.OutboxResponse, thread.OutboxResponse}, h.sender.kinds(th.ID))
	require.Equal(t, 2, h.llm.Calls(), "nothing was asked twice")
}

func TestAbortMidTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := h.llm.Block()
	defer release()
	th := h.linearThread(t, "do something slow")
	select {
	case <-h.llm.Arrived():
	case <-time.After(10 * time.Second):
		t.Fatal("the model was never called")
	}
	aborted, err := h.ingest.Abort(context.Background(), th.ID, "Stopped.")
	require.NoError(t, err)
	require.True(t, aborted)

	h.waitStatus(t, th.ID, thread.StatusAborted) // the turn let go of its lease
	release()
	h.waitSent(t, th.ID, 1)
	chain := h.chain(t, th.ID)
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt, thread.StitchAgentThought}, types(chain),
		"no llm_call is recorded after the abort")
	require.True(t, chain[2].Meta().Stop)
	require.Equal(t, []thread.OutboxKind{thread.OutboxResponse}, h.sender.kinds(th.ID))

	again, err := h.ingest.Abort(context.Background(), th.ID, "Stopped.")
	require.NoError(t, err)
	require.False(t, again, "aborting twice changes nothing")

	// A new prompt after the stop reopens the thread.
	h.llm.Enqueue(llmtest.Reply{Text: "back again"})
	_, err = h.ingest.AddInput(context.Background(), th.ID, thread.Stitch{Type: thread.StitchLinearActivity, Content: "try again", Source: thread.PlatformLinear, ExternalID: "act-again"})
	require.NoError(t, err)
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	require.Equal(t, "back again", h.chain(t, th.ID)[4].Content)
}

func TestPoisonTurnFailsThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.model.panicOn = "poison"
	th := h.linearThread(t, "poison pill")
	other := h.linearThread(t, "a healthy thread")
	failed := h.waitStatus(t, th.ID, thread.StatusFailed)
	require.Contains(t, failed.Error, "kept failing")
	chain := h.chain(t, th.ID)
	require.Equal(t, thread.StitchError, chain[len(chain)-1].Type)
	h.waitStatus(t, other.ID, thread.StatusWaiting)
	h.waitSent(t, th.ID, 1)
	require.Equal(t, []thread.OutboxKind{thread.OutboxError}, h.sender.kinds(th.ID))
}

// An abort that commits as a poisoned turn's last attempt fails has the
// last word: the failure records nothing after it.
func TestAbortBeforeTheLastFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var h *harness
	var attempts atomic.Int32
	h = newHarnessConfig(t, func(c *processor.Config) {
		c.OnTurn = func(_ context.Context, id uuid.UUID) func() {
			return func() {
				// Runs as the attempt ends, before its failure is recorded.
				if attempts.Add(1) == job.TurnMaxAttempts {
					_, err := h.ingest.Abort(context.WithoutCancel(ctx), id, "Stopped.")
					require.NoError(t, err)
				}
			}
		}
	})
	h.model.panicOn = "poison"
	th := h.linearThread(t, "poison pill")
	require.Eventually(t, func() bool { return attempts.Load() == job.TurnMaxAttempts }, 20*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&n))
		return n == 0
	}, 20*time.Second, 10*time.Millisecond, "the last attempt ended")

	cur, err := h.store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusAborted, cur.Status)
	chain := h.chain(t, th.ID)
	require.Equal(t, thread.StitchAgentThought, chain[len(chain)-1].Type, "the stop is the last stitch")
	require.NotContains(t, types(chain), thread.StitchError)
}

func TestStepLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.llm.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "lookup", Arguments: `{"q":"again"}`}}}
	})
	th := h.linearThread(t, "loop forever")
	h.waitStatus(t, th.ID, thread.StatusWaiting)
	chain := h.chain(t, th.ID)
	require.Equal(t, thread.StitchError, chain[len(chain)-1].Type)
	require.Contains(t, chain[len(chain)-1].Content, "Stopped after 6 model calls")
	require.Equal(t, 6, h.llm.Calls())
}

func TestDeliveryRetriesPostOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sender.failFirst, h.sender.lose = 3, true // posted, but the answers were lost
	h.llm.Enqueue(llmtest.Reply{Text: "done"})
	th := h.linearThread(t, "hi")
	rows := h.waitSent(t, th.ID, 1)
	require.Len(t, rows, 1)
	require.Equal(t, thread.OutboxSent, rows[0].Status)
	require.Equal(t, 4, rows[0].Attempts)
	require.Equal(t, []thread.OutboxKind{thread.OutboxResponse}, h.sender.kinds(th.ID), "exactly one post")
}

func TestDeliveryGivesUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sender.permanent = fmt.Errorf("%w: session not found", thread.ErrInvalid)
	h.llm.Enqueue(llmtest.Reply{Text: "done"})
	th := h.linearThread(t, "hi")
	rows := h.waitSent(t, th.ID, 1)
	require.Equal(t, thread.OutboxFailed, rows[0].Status)
	require.Eventually(t, func() bool {
		chain := h.chain(t, th.ID)
		return chain[len(chain)-1].Type == thread.StitchError
	}, 10*time.Second, 10*time.Millisecond)
}

// A post the platform refuses while the turn's tools run (a thought beside
// the calls) leaves an error stitch in the chain: the turn still runs its
// tools and answers.
func TestRefusedPostMidTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, func(r *agent.Runner, store *db.Store) {
		reg, err := tools.NewRegistry(tools.Tool{Name: "wait", Description: "waits for the refusal", Schema: json.RawMessage(`{"type":"object"}`),
			Handler: func(ctx context.Context, c tools.Call) (string, error) {
				// Ends once the refused thought's error stitch is in the chain.
				t := time.NewTicker(10 * time.Millisecond)
				defer t.Stop()
				for {
					chain, err := store.Stitches(ctx, c.ThreadID, db.StitchPage{})
					if err != nil {
						return "", err
					}
					for _, s := range chain {
						if s.Type == thread.StitchError {
							return "waited", nil
						}
					}
					select {
					case <-ctx.Done():
						return "", ctx.Err()
					case <-t.C:
					}
				}
			}})
		require.NoError(t, err)
		r.Tools = reg
	})
	h.sender.refuse = thread.OutboxThought
	h.llm.Enqueue(llmtest.Reply{Text: "let me look", ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{}`}}})
	h.llm.Enqueue(llmtest.Reply{Text: "the answer"})
	th := h.linearThread(t, "hi")

	h.waitStatus(t, th.ID, thread.StatusWaiting)
	h.waitSent(t, th.ID, 3)
	require.Equal(t, []thread.OutboxKind{thread.OutboxAction, thread.OutboxResponse}, h.sender.kinds(th.ID), "the thought was refused, the rest posted")
	require.Equal(t, []thread.StitchType{thread.StitchSystemPrompt, thread.StitchInitialPrompt, thread.StitchLLMCall,
		thread.StitchAgentThought, thread.StitchError, thread.StitchToolCall, thread.StitchLLMCall},
		types(h.chain(t, th.ID)))
	cur, err := h.store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Empty(t, cur.LeaseOwner)
}

// A post whose job was lost is found by the sweep and sent, once.
func TestSweepSendsAStrandedRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.waitRan(t, "weft_sweep")
	// A post due for two minutes whose job is gone.
	th := dbtest.Thread(ctx, t, h.store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	o, err := h.store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
		Target: "session-1", Kind: thread.OutboxResponse, Body: thread.OutboxBody{Text: "stranded"}.JSON()})
	require.NoError(t, err)
	_, err = h.pool.Exec(ctx, `UPDATE platform_deliveries SET next_attempt_at = now() - interval '2 minutes' WHERE delivery_id = $1`, o.ID)
	require.NoError(t, err)

	rows := h.waitSent(t, th.ID, 1)
	require.Equal(t, thread.OutboxSent, rows[0].Status)
	require.Equal(t, []thread.OutboxKind{thread.OutboxResponse}, h.sender.kinds(th.ID), "posted once")
}

// Each sweep runs the platforms' own sweeps (Config.Sweeps).
func TestSweepRunsThePlatformsSweeps(t *testing.T) {
	t.Parallel()
	ran := make(chan struct{}, 10)
	newHarnessConfig(t, func(c *processor.Config) {
		c.Sweeps = []processor.Sweep{{Name: "upkept", Run: func(context.Context) (int64, error) {
			select {
			case ran <- struct{}{}:
			default:
			}
			return 1, nil
		}}}
	})
	select {
	case <-ran:
	case <-time.After(time.Minute):
		t.Fatal("the platform's sweep never ran")
	}
}

// leftRunning inserts args as a job that a replica which died age ago left
// running, before the harness's processor starts.
func leftRunning(t *testing.T, store *db.Store, args river.JobArgs, age time.Duration) int64 {
	t.Helper()
	ctx := context.Background()
	insertOnly, err := river.NewClient(riverpgxv5.New(store.Pool()), &river.Config{})
	require.NoError(t, err)
	res, err := insertOnly.Insert(ctx, args, nil)
	require.NoError(t, err)
	_, err = store.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - $2 * interval '1 second', attempted_by = '{dead-replica}' WHERE id = $1`, res.Job.ID, age.Seconds())
	require.NoError(t, err)
	return res.Job.ID
}

// A sweep left running by a leader that died does not keep later sweeps
// out (sweeps are unique while running): River's rescuer ends it.
func TestSweepsOutliveASweepLeftRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, func(_ *agent.Runner, store *db.Store) { leftRunning(t, store, job.Sweep{}, time.Hour) })
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"resumed"}`}}})
	th := dbtest.Thread(ctx, t, h.store, nil)
	_, err := h.pool.Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = 'dead-replica',
		lease_expires_at = now() - interval '1 second' WHERE thread_id = $1`, th.ID)
	require.NoError(t, err)
	h.waitStatus(t, th.ID, thread.StatusCompleted)
}

// A turn job that a dead replica left running before its turn took the
// thread's lease is found by the sweep: the thread's input is answered by a
// new turn, the dead job is marked for River to cancel, and later sweeps
// leave it be.
func TestSweepTakesUpATurnJobLeftRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var th *thread.Thread
	var dead int64
	h := newHarness(t, func(_ *agent.Runner, store *db.Store) {
		th = dbtest.Thread(ctx, t, store, nil) // pending: its input unanswered
		// Past the sweep's grace, and well within the turn timeout, after
		// which River's rescuer would retry the job itself.
		dead = leftRunning(t, store, job.Turn{ThreadID: th.ID}, 5*time.Minute)
	})
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"answered"}`}}})
	h.waitStatus(t, th.ID, thread.StatusCompleted)

	sweeps := func() (n int) {
		require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_sweep' AND state = 'completed'`).Scan(&n))
		return n
	}
	after := sweeps()
	require.Eventually(t, func() bool { return sweeps() >= after+3 }, 10*time.Second, 10*time.Millisecond)
	var turns int
	var marked bool
	require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*), bool_or(id = $2 AND metadata ? 'cancel_attempted_at')
		FROM river_job WHERE kind = 'weft_turn' AND args->>'thread_id' = $1`, th.ID.String(), dead).Scan(&turns, &marked))
	require.Equal(t, 2, turns, "the dead job and the one turn the sweep enqueued")
	require.True(t, marked, "the dead job is marked for River's rescuer to cancel")
}

// The leader's sweep runs again and again: a turn whose replica died after
// the first sweeps had run is still taken up by a later one.
func TestSweepResumesALapsedTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"resumed"}`}}})
	h.waitRan(t, "weft_sweep")
	// A thread with no turn job, held by a replica that died.
	th := dbtest.Thread(ctx, t, h.store, nil)
	_, err := h.pool.Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = 'dead-replica',
		lease_expires_at = now() - interval '1 second' WHERE thread_id = $1`, th.ID)
	require.NoError(t, err)
	done := h.waitStatus(t, th.ID, thread.StatusCompleted)
	require.JSONEq(t, `{"result":"resumed"}`, string(done.Result))
}

// A post waiting in line behind a post that keeps failing, and given many
// jobs meanwhile (wakes, sweeps), is still sent at most its bound of
// attempts: the row counts them, not each job.
func TestDeliveryAttemptsAreCountedPerRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.sender.mu.Lock()
	h.sender.permanent = errors.New("503 service unavailable")
	h.sender.mu.Unlock()
	th := dbtest.Thread(ctx, t, h.store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	insertOnly, err := river.NewClient(riverpgxv5.New(h.pool), &river.Config{})
	require.NoError(t, err)
	var ids []uuid.UUID
	for _, text := range []string{"first", "waits behind it"} {
		o, err := h.store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
			Target: "session-1", Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: text}.JSON()})
		require.NoError(t, err)
		ids = append(ids, o.ID)
	}
	// One job for the first; ten for the second, as sweeps gave it.
	jobs := []river.InsertManyParams{{Args: job.Delivery{OutboxID: ids[0], ThreadID: th.ID}}}
	for range 10 {
		jobs = append(jobs, river.InsertManyParams{Args: job.Delivery{OutboxID: ids[1], ThreadID: th.ID}})
	}
	_, err = insertOnly.InsertMany(ctx, jobs)
	require.NoError(t, err)

	rows := h.waitSent(t, th.ID, 2)
	for _, o := range rows[:2] {
		require.Equal(t, thread.OutboxFailed, o.Status, string(o.Body))
	}
	// Every request the platform saw is an attempt some row counted.
	require.Eventually(t, func() bool {
		rows = h.waitSent(t, th.ID, 2)
		attempts := 0
		for _, o := range rows {
			attempts += o.Attempts
		}
		h.sender.mu.Lock()
		defer h.sender.mu.Unlock()
		return attempts == h.sender.sends
	}, 20*time.Second, 10*time.Millisecond)
	for _, o := range rows {
		require.LessOrEqual(t, o.Attempts, job.DeliveryMaxAttempts, "attempts of %s", o.Body)
	}
}

// A thread whose answer the platform refuses for good does not rest
// waiting as if answered: it fails, and says so on its surface.
func TestRefusedAnswerFailsTheThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sender.mu.Lock()
	h.sender.refuse = thread.OutboxResponse
	h.sender.mu.Unlock()
	h.llm.Enqueue(llmtest.Reply{Text: "the answer"})
	th := h.linearThread(t, "hi")
	failed := h.waitStatus(t, th.ID, thread.StatusFailed)
	require.Contains(t, failed.Error, "Could not post a response")
	h.waitSent(t, th.ID, 2)
	require.Equal(t, []thread.OutboxKind{thread.OutboxError}, h.sender.kinds(th.ID), "the error reached the surface")
	// The user reads a plain sentence; the platform's words stay with the
	// operator, in the thread's error.
	h.sender.mu.Lock()
	defer h.sender.mu.Unlock()
	for _, o := range h.sender.posts {
		if o.ThreadID == th.ID {
			body, err := o.Content()
			require.NoError(t, err)
			require.NotContains(t, body.Text, "refused")
			require.NotContains(t, body.Text, "invalid")
			require.Contains(t, body.Text, "could not be posted")
		}
	}
	require.Contains(t, failed.Error, "response refused")
}
