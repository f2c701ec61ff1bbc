package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/thread"
)

// created ingests a new Linear session through in and returns its thread
// and the acknowledging thought's outbox row.
func created(t *testing.T, store *db.Store, in *ingest.Ingester) (uuid.UUID, thread.Outbox) {
	t.Helper()
	att := dbtest.LinearAttachment()
	res, err := in.LinearCreated(context.Background(),
		thread.Inbound{DeliveryID: uuid.NewString(), EventKey: att.SessionID, EventType: "AgentSessionEvent", Action: "created"},
		ingest.LinearSession{Attachment: *att, Goal: "ENG-1 Fix the flaky test", Prompt: "why is it flaky?"})
	require.NoError(t, err)
	rows, err := store.ThreadOutbox(context.Background(), res.ThreadID)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, thread.OutboxThought, rows[0].Kind)
	return res.ThreadID, rows[0]
}

// An express send needs no worker: on a replica that works no jobs at all
// the acknowledgement still goes out, once.
func TestExpressSendsWithoutWorkers(t *testing.T) {
	t.Parallel()
	logger := dbtest.Logger(t)
	pool := dbtest.NewPool(t)
	store := db.New(pool, logger)
	sender := newRecordingSender()
	proc, err := processor.New(pool, store, nil, map[thread.Platform]processor.Sender{thread.PlatformLinear: sender},
		processor.Config{Workers: false}, logger)
	require.NoError(t, err)
	in := ingest.New(store, proc.Inserter(), nil, logger)
	express := proc.Express(store, 4)
	in.SendAtOnce(express)

	threadID, ack := created(t, store, in)
	express.Wait()
	got, err := store.Outbox(context.Background(), ack.ID)
	require.NoError(t, err)
	require.Equal(t, thread.OutboxSent, got.Status)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, "ext-"+ack.ID.String(), got.ExternalID)
	require.Equal(t, []thread.OutboxKind{thread.OutboxThought}, sender.kinds(threadID))
}

// What express cannot send, the row's delivery job sends: after a failed
// express send, and when every express slot is busy.
func TestExpressFallsBackToTheJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		slots     int
		failFirst int
		attempts  int
		// express is whether express tried a send of its own: the job
		// is held 2 s, so a send seen by then is express's.
		express bool
	}{
		{name: "SendFailed", slots: 4, failFirst: 1, attempts: 2, express: true},
		// The row was written claimed for express: that claim counts.
		{name: "NoSlot", slots: 0, attempts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.sender.failFirst = tc.failFirst
			express := h.proc.Express(h.store, tc.slots)
			h.ingest.SendAtOnce(express)
			threadID, ack := created(t, h.store, h.ingest)
			express.Wait()
			if tc.express {
				h.sender.mu.Lock()
				sends := h.sender.sends
				h.sender.mu.Unlock()
				require.GreaterOrEqual(t, sends, 1, "express tried before the job")
			}
			require.Eventually(t, func() bool {
				got, err := h.store.Outbox(context.Background(), ack.ID)
				require.NoError(t, err)
				return got.Status == thread.OutboxSent
			}, 20*time.Second, 20*time.Millisecond)
			got, err := h.store.Outbox(context.Background(), ack.ID)
			require.NoError(t, err)
			require.Equal(t, tc.attempts, got.Attempts)
			require.Equal(t, thread.OutboxThought, h.sender.kinds(threadID)[0], "the acknowledgement, posted once and first")
		})
	}
}
