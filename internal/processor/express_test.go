package processor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/surface"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// created ingests a new Linear session through in and returns its thread
// and the acknowledging thought's outbox row.
func created(t *testing.T, store *db.Store, in *ingest.Ingester) (uuid.UUID, thread.Outbox) {
	t.Helper()
	att := dbtest.LinearAttachment()
	res, err := in.Record(context.Background(), surfacelinear.Created(
		thread.Inbound{DeliveryID: uuid.NewString(), EventKey: att.SessionID, EventType: "AgentSessionEvent", Action: "created"},
		surfacelinear.Session{Attachment: *att, Goal: "ENG-1 Fix the flaky test", Prompt: "why is it flaky?"}))
	require.NoError(t, err)
	rows, err := store.ThreadOutbox(context.Background(), res.ThreadID)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, thread.OutboxThought, rows[0].Kind)
	return res.ThreadID, rows[0]
}

// expressOnly is an ingester on pool whose acknowledgements go out by
// express, slots at a time, to the returned sender, on a replica that
// works no jobs.
func expressOnly(t *testing.T, pool *pgxpool.Pool, slots int) (*db.Store, *ingest.Ingester, *processor.Express, *recordingSender) {
	t.Helper()
	logger := dbtest.Logger(t)
	store := db.New(pool, logger)
	sender := newRecordingSender()
	proc, err := processor.New(processor.Deps{Pool: pool, Store: store, Logger: logger,
		Senders: map[thread.Platform]processor.Sender{thread.PlatformLinear: sender}, Config: processor.Config{Workers: false}})
	require.NoError(t, err)
	express := proc.Express(store, slots)
	in := ingest.New(ingest.Deps{Store: store, Jobs: proc.Inserter(), Express: express, Logger: logger})
	return store, in, express, sender
}

// An express send needs no worker: on a replica that works no jobs at all
// the acknowledgement still goes out, once.
func TestExpressSendsWithoutWorkers(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewPool(t)
	store, in, express, sender := expressOnly(t, pool, 4)

	threadID, ack := created(t, store, in)
	express.Wait()
	got, err := store.Outbox(context.Background(), ack.ID)
	require.NoError(t, err)
	require.Equal(t, thread.OutboxSent, got.Status)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, "ext-"+ack.ID.String(), got.ExternalID)
	require.Equal(t, []thread.OutboxKind{thread.OutboxThought}, sender.kinds(threadID))
	var jobs int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'weft_delivery'`).Scan(&jobs))
	require.Zero(t, jobs, "a row express sends costs no delivery job")
}

// Sessions opened together get their acknowledgements sent once each,
// when their part of the batch commits; sessions a prompted event made
// first refuse the batch, which is split, and get no express send from
// their created event (their acknowledgement came with the prompt).
func TestExpressSendsEachOfABatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two connections: one transaction of new sessions at a time, so a
	// burst is batched.
	pool := dbtest.NewPoolOf(t, 2)
	store, in, express, sender := expressOnly(t, pool, 64)

	type session struct {
		s       surfacelinear.Session
		early   bool
		prompt  uuid.UUID // the thread the prompted event made
		created surface.Recorded
	}
	sessions := make([]*session, 30)
	for i := range sessions {
		att := dbtest.LinearAttachment()
		ss := &session{s: surfacelinear.Session{Attachment: *att, Goal: "ENG-1 Fix the flaky test", Prompt: "why?"}, early: i%5 == 0}
		if ss.early {
			res, err := in.Record(ctx, surfacelinear.Prompted(thread.Inbound{DeliveryID: uuid.NewString(), EventKey: uuid.NewString(), EventType: "AgentSessionEvent", Action: "prompted"},
				ss.s, surfacelinear.Prompt{ActivityID: uuid.NewString(), Text: "go"}))
			require.NoError(t, err)
			ss.prompt = res.ThreadID
		}
		sessions[i] = ss
	}
	var wg sync.WaitGroup
	for _, ss := range sessions {
		wg.Go(func() {
			var err error
			ss.created, err = in.Record(ctx, surfacelinear.Created(
				thread.Inbound{DeliveryID: uuid.NewString(), EventKey: ss.s.Attachment.SessionID, EventType: "AgentSessionEvent", Action: "created"}, ss.s))
			require.NoError(t, err)
		})
	}
	wg.Wait()
	express.Wait()

	for _, ss := range sessions {
		rows, err := store.ThreadOutbox(ctx, ss.created.ThreadID)
		require.NoError(t, err)
		require.Len(t, rows, 1, "one acknowledgement")
		if ss.early {
			require.Equal(t, ss.prompt, ss.created.ThreadID)
			require.Equal(t, thread.OutboxPending, rows[0].Status, "left to its delivery job")
			require.Empty(t, sender.kinds(ss.created.ThreadID))
			continue
		}
		require.Equal(t, thread.OutboxSent, rows[0].Status)
		require.Equal(t, 1, rows[0].Attempts, "sent by express, once")
		require.Equal(t, []thread.OutboxKind{thread.OutboxThought}, sender.kinds(ss.created.ThreadID))
	}
	var txs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM linear_thread_metadata`).Scan(&txs))
	require.Less(t, txs, len(sessions), "sessions were opened together")
}

// What express cannot send, a delivery job sends: after a failed express
// send at once, and, when every express slot was busy (as when the process
// died before sending), once the leader's reclaim finds the claim lapsed.
func TestExpressHandsOverToAJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		slots     int
		failFirst int
		// express is whether express tried a send of its own.
		express bool
		// lapsed is whether the row waited for its 2 s claim to lapse.
		lapsed bool
	}{
		{name: "SendFailed", slots: 4, failFirst: 1, express: true},
		{name: "NoSlot", slots: 0, lapsed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.waitRan(t, "weft_reclaim")
			// The turn answers only once the acknowledgement is out: an
			// answer ready first would drop the failed acknowledgement (as
			// it should) and leave nothing for this test to see.
			release := make(chan struct{})
			var once sync.Once
			answer := func() { once.Do(func() { close(release) }) }
			t.Cleanup(answer)
			h.llm.SetDefault(func(llmtest.Request) llmtest.Reply { <-release; return llmtest.Reply{Text: "ok"} })
			h.sender.failFirst = tc.failFirst
			express := h.proc.Express(h.store, tc.slots)
			in := ingest.New(ingest.Deps{Store: h.store, Jobs: h.proc.Inserter(), Express: express, Logger: dbtest.Logger(t)})
			threadID, ack := created(t, h.store, in)
			express.Wait()
			h.sender.mu.Lock()
			sends := h.sender.sends
			h.sender.mu.Unlock()
			require.Equal(t, tc.express, sends > 0, "express tried a send")
			start := time.Now()
			require.Eventually(t, func() bool {
				got, err := h.store.Outbox(context.Background(), ack.ID)
				require.NoError(t, err)
				return got.Status == thread.OutboxSent
			}, 20*time.Second, 20*time.Millisecond)
			answer()
			require.Equal(t, tc.lapsed, time.Since(start) > time.Second, "sent when the claim lapsed, not before")
			got, err := h.store.Outbox(context.Background(), ack.ID)
			require.NoError(t, err)
			require.Equal(t, 2, got.Attempts, "express's claim counts, and the job's")
			require.Equal(t, thread.OutboxThought, h.sender.kinds(threadID)[0], "the acknowledgement, posted once and first")
		})
	}
}
