package processor_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
)

// A post Linear keeps answering 500 costs at most its row's attempts in
// HTTP requests: the client's own retries are off for outbox sends, so the
// one budget is job.DeliveryMaxAttempts requests, whatever layer retries.
func TestLinearOutageCostsOneRequestPerAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lin := lineartest.NewServer(t)
	lin.Fail("", 1000, fakekit.Fail(http.StatusInternalServerError))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	// The client's default retries, as weft serve builds it.
	client := linear.NewClient(linear.ClientDeps{Endpoint: lin.URL(), HTTPClient: &http.Client{Transport: tr}, Tokens: linear.StaticToken(lineartest.AccessToken)})
	h := newHarnessSending(t, "openai", linear.NewSender(client, nil), nil)

	th := dbtest.Thread(ctx, t, h.store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	o, err := h.store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
		Target: "session-1", Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: "Looking into it…"}.JSON()})
	require.NoError(t, err)
	insertOnly, err := river.NewClient(riverpgxv5.New(h.pool), &river.Config{})
	require.NoError(t, err)
	_, err = insertOnly.Insert(ctx, job.Delivery{OutboxID: o.ID, ThreadID: th.ID}, nil)
	require.NoError(t, err)

	rows := h.waitSent(t, th.ID, 1)
	require.Equal(t, thread.OutboxFailed, rows[0].Status)
	require.Equal(t, job.DeliveryMaxAttempts, rows[0].Attempts)
	require.Equal(t, job.DeliveryMaxAttempts, len(lin.Requests()), "one HTTP request per attempt of the row")
}

// hangingSender's first send hangs until its context ends, as a slow
// platform's does; it records the most sends of one row in flight at once.
type hangingSender struct {
	mu        sync.Mutex
	sends     map[string]int // by row
	inFlight  map[string]int
	maxFlight int
}

func (s *hangingSender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	s.mu.Lock()
	s.sends[o.ID.String()]++
	first := len(s.sends) == 1 && s.sends[o.ID.String()] == 1
	s.inFlight[o.ID.String()]++
	s.maxFlight = max(s.maxFlight, s.inFlight[o.ID.String()])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight[o.ID.String()]--
		s.mu.Unlock()
	}()
	if first {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "ext-" + o.ID.String(), nil
}

// An express send that hangs ends before its claim does: the leader's
// reclaim, which hands a row whose claim lapsed to a delivery job, never
// has it sent a second time while the first send is in flight.
func TestExpressSendEndsWithinItsClaim(t *testing.T) {
	t.Parallel()
	sender := &hangingSender{sends: map[string]int{}, inFlight: map[string]int{}}
	h := newHarnessSending(t, "openai", sender, nil)
	h.waitRan(t, "weft_reclaim")
	express := h.proc.Express(h.store, 4)
	in := ingest.New(ingest.Deps{Store: h.store, Jobs: h.proc.Inserter(), Express: express, Logger: dbtest.Logger(t)})
	_, ack := created(t, h.store, in)
	require.Eventually(t, func() bool {
		got, err := h.store.Outbox(context.Background(), ack.ID)
		require.NoError(t, err)
		return got.Status == thread.OutboxSent
	}, 20*time.Second, 10*time.Millisecond)
	express.Wait()
	sender.mu.Lock()
	defer sender.mu.Unlock()
	require.Equal(t, 1, sender.maxFlight, "never two sends of the row at once")
	// Counted for the acknowledgement's row alone: the turn's answer is
	// another row, sent once the turn ends.
	require.Equal(t, 2, sender.sends[ack.ID.String()], "the hung send and the job's")
}

// A turn a shutdown cuts short hands its thread over pending, not running
// without a lease: nothing shows running where nothing runs, and
// stuck_threads, which measures a pending thread's wait from the
// hand-over, does not list a thread created long ago at once.
func TestShutdownHandsTheThreadOverPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.llm.Enqueue(llmtest.Reply{Delay: time.Hour}) // until the shutdown cancels it
	th := h.linearThread(t, "hello")
	require.Eventually(t, func() bool { return h.llm.Calls() == 1 }, 20*time.Second, 10*time.Millisecond, "the turn never called the model")
	_, err := h.pool.Exec(ctx, `UPDATE threads SET created_at = now() - interval '1 hour' WHERE thread_id = $1`, th.ID)
	require.NoError(t, err)

	stop, cancel := context.WithCancel(ctx)
	cancel() // no drain: the running turn is cancelled at once
	require.NoError(t, h.proc.Stop(stop))

	got, err := h.store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusPending, got.Status)
	require.Empty(t, got.LeaseOwner)
	var turns, stuck int
	require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND state = 'available'
		AND args->>'thread_id' = $1`, th.ID.String()).Scan(&turns))
	require.Equal(t, 1, turns, "a turn job due at once for the next replica")
	require.NoError(t, h.pool.QueryRow(ctx, `SELECT count(*) FROM stuck_threads WHERE thread_id = $1`, th.ID).Scan(&stuck))
	require.Zero(t, stuck)
}

// A turn whose replica died holding its thread's lease resumes once the
// lease lapses, found by the reclaim that runs every second, not by the
// sweep (here an hour apart, so only the reclaim can find it): a follow-up
// a dying replica took is answered within about the lease's TTL.
func TestLapsedTurnResumesWithoutTheSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarnessConfig(t, func(c *processor.Config) { c.SweepInterval = time.Hour })
	h.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "complete_thread", Arguments: `{"result":"resumed"}`}}})
	h.waitRan(t, "weft_sweep")
	th := dbtest.Thread(ctx, t, h.store, nil)
	// The dead replica's turn job, running, and its lease, lapsed: written
	// together, so that no live worker takes the job first.
	insertOnly, err := river.NewClient(riverpgxv5.New(h.pool), &river.Config{})
	require.NoError(t, err)
	require.NoError(t, h.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		res, err := insertOnly.InsertTx(ctx, tx.Pgx(), job.Turn{ThreadID: th.ID}, nil)
		if err != nil {
			return err
		}
		if _, err := tx.Pgx().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(),
			attempted_by = '{dead-replica}' WHERE id = $1`, res.Job.ID); err != nil {
			return err
		}
		_, err = tx.Pgx().Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = $2,
			lease_expires_at = now() - interval '1 millisecond' WHERE thread_id = $1`, th.ID, db.TurnOwner("dead-replica", res.Job.ID))
		return err
	}))
	done := h.waitStatus(t, th.ID, thread.StatusCompleted)
	require.JSONEq(t, `{"result":"resumed"}`, string(done.Result))
}

// kindSender fails every post of one kind, as a platform in an outage that
// happens to hit the first post, and records the kinds it posted, in order.
type kindSender struct {
	mu     sync.Mutex
	fail   thread.OutboxKind
	posted []thread.OutboxKind
}

func (s *kindSender) Send(_ context.Context, o thread.Outbox) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Kind == s.fail {
		return "", errors.New("500 internal server error")
	}
	s.posted = append(s.posted, o.Kind)
	return "ext-" + o.ID.String(), nil
}

// An acknowledgement that keeps failing does not hold up the answer behind
// it: the answer, once ready, drops it (it is only progress) and goes out,
// and the acknowledgement is never posted after the answer, nor reported
// as a failure. Answers still keep their order.
func TestFailingAcknowledgementDoesNotHoldTheAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sender := &kindSender{fail: thread.OutboxThought}
	// Retries a second apart and more: the thought's eight would take
	// minutes, and the harness waits 20 s.
	h := newHarnessSending(t, "openai", sender, func(c *processor.Config) { c.DeliveryBackoff = time.Second })
	th := dbtest.Thread(ctx, t, h.store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	var jobs []river.InsertManyParams
	for _, k := range []thread.OutboxKind{thread.OutboxThought, thread.OutboxResponse, thread.OutboxResponse} {
		o, err := h.store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
			Target: "session-1", Kind: k, Body: thread.OutboxBody{Text: string(k)}.JSON()})
		require.NoError(t, err)
		jobs = append(jobs, river.InsertManyParams{Args: job.Delivery{OutboxID: o.ID, ThreadID: th.ID}})
	}
	insertOnly, err := river.NewClient(riverpgxv5.New(h.pool), &river.Config{})
	require.NoError(t, err)
	_, err = insertOnly.InsertMany(ctx, jobs)
	require.NoError(t, err)

	rows := h.waitSent(t, th.ID, 3)
	require.Equal(t, []thread.OutboxStatus{thread.OutboxDropped, thread.OutboxSent, thread.OutboxSent},
		[]thread.OutboxStatus{rows[0].Status, rows[1].Status, rows[2].Status})
	sender.mu.Lock()
	require.Equal(t, []thread.OutboxKind{thread.OutboxResponse, thread.OutboxResponse}, sender.posted)
	sender.mu.Unlock()
	for _, s := range h.chain(t, th.ID) {
		require.NotEqual(t, thread.StitchError, s.Type, "a dropped post is no failure: %s", s.Content)
	}
}
