package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

const leaseTTL = 30 * time.Second

// startOn reads the thread and takes its lease for owner as a turn does.
func startOn(t *testing.T, store *db.Store, id uuid.UUID, owner string) (*thread.Thread, *db.TurnState) {
	t.Helper()
	st, err := store.TurnState(context.Background(), id)
	require.NoError(t, err)
	th, err := store.StartTurn(context.Background(), id, db.TurnStart{Owner: owner, TTL: leaseTTL,
		Status: st.Thread.Status, Head: st.Chain[len(st.Chain)-1].ID, Running: st.Thread.Status != thread.StatusRunning})
	require.NoError(t, err)
	return th, st
}

func TestTurnState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)

	tests := []struct {
		name     string
		opts     *dbtest.ThreadOpts
		platform thread.Platform
	}{
		{"AutonomousHasNoSurface", nil, ""},
		{"LinearSessionIsTheSurface", &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()}, thread.PlatformLinear},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := dbtest.Thread(ctx, t, store, tt.opts)
			if tt.platform != "" {
				_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLinearActivity,
					Content: "and now?", Source: tt.platform, ExternalID: uuid.NewString()})
				require.NoError(t, err)
			}
			st, err := store.TurnState(ctx, th.ID)
			require.NoError(t, err)
			require.Equal(t, th.ID, st.Thread.ID)
			all, err := store.Stitches(ctx, th.ID, db.StitchPage{})
			require.NoError(t, err)
			require.Equal(t, all, st.Chain)
			require.Equal(t, tt.platform, st.Platform)
			if tt.opts != nil && tt.opts.Linear != nil {
				require.Equal(t, tt.opts.Linear.SessionID, st.Target)
			}
		})
	}

	t.Run("UnknownThread", func(t *testing.T) {
		_, err := store.TurnState(ctx, uuid.New())
		require.ErrorIs(t, err, thread.ErrNotFound)
	})
}

func TestStartTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)

	t.Run("TakesTheLeaseAndRuns", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		got, _ := startOn(t, store, th.ID, "a")
		require.Equal(t, thread.StatusRunning, got.Status)
		require.Equal(t, "a", got.LeaseOwner)
		require.WithinDuration(t, time.Now().Add(leaseTTL), got.LeaseExpires, 5*time.Second)
	})

	t.Run("RefusedWhileAnotherHoldsIt", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		_, st := startOn(t, store, th.ID, "a")
		_, err := store.StartTurn(ctx, th.ID, db.TurnStart{Owner: "b", TTL: leaseTTL, Status: thread.StatusRunning, Head: st.Chain[len(st.Chain)-1].ID})
		require.ErrorIs(t, err, thread.ErrLeaseHeld)
		cur, err := store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, "a", cur.LeaseOwner)
	})

	t.Run("ALapsedLeaseIsTaken", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		st, err := store.TurnState(ctx, th.ID)
		require.NoError(t, err)
		head := st.Chain[len(st.Chain)-1].ID
		// A lease that lapsed a second ago, rather than a short one and a
		// sleep until it lapses.
		_, err = store.StartTurn(ctx, th.ID, db.TurnStart{Owner: "dead", TTL: -time.Second, Status: thread.StatusPending, Head: head, Running: true})
		require.NoError(t, err)
		got, err := store.StartTurn(ctx, th.ID, db.TurnStart{Owner: "b", TTL: leaseTTL, Status: thread.StatusRunning, Head: head})
		require.NoError(t, err)
		require.Equal(t, "b", got.LeaseOwner)
		require.Equal(t, thread.StatusRunning, got.Status)
	})

	stale := []struct {
		name   string
		change func(t *testing.T, id uuid.UUID)
	}{
		{"NewInputSinceTheRead", func(t *testing.T, id uuid.UUID) {
			_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: id, Type: thread.StitchInitialPrompt, Content: "more"})
			require.NoError(t, err)
		}},
		{"StatusChangedSinceTheRead", func(t *testing.T, id uuid.UUID) {
			_, err := store.SetStatus(ctx, id, thread.StatusChange{To: thread.StatusAborted})
			require.NoError(t, err)
		}},
	}
	for _, tt := range stale {
		t.Run(tt.name, func(t *testing.T) {
			th := dbtest.Thread(ctx, t, store, nil)
			st, err := store.TurnState(ctx, th.ID)
			require.NoError(t, err)
			tt.change(t, th.ID)
			_, err = store.StartTurn(ctx, th.ID, db.TurnStart{Owner: "a", TTL: leaseTTL, Status: st.Thread.Status,
				Head: st.Chain[len(st.Chain)-1].ID, Running: true})
			require.ErrorIs(t, err, thread.ErrConflict)
			require.NotErrorIs(t, err, thread.ErrLeaseHeld)
			cur, err := store.Thread(ctx, th.ID)
			require.NoError(t, err)
			require.Empty(t, cur.LeaseOwner, "nothing taken")
		})
	}

	t.Run("UnknownThread", func(t *testing.T) {
		_, err := store.StartTurn(ctx, uuid.New(), db.TurnStart{Owner: "a", TTL: leaseTTL, Status: thread.StatusPending})
		require.ErrorIs(t, err, thread.ErrNotFound)
	})
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	ids := make([]uuid.UUID, 4)
	for i := range ids {
		ids[i] = dbtest.Thread(ctx, t, store, nil).ID
		startOn(t, store, ids[i], "a")
	}
	_, err := store.SetStatus(ctx, ids[1], thread.StatusChange{To: thread.StatusAborted})
	require.NoError(t, err)
	require.NoError(t, store.ReleaseLease(ctx, ids[2], "a"))
	require.NoError(t, store.ReleaseLease(ctx, ids[3], "a"))
	startOn(t, store, ids[3], "b")

	const ttl = time.Hour
	renew := []db.TurnLease{{ids[0], "b"}, {ids[3], "b"}, {ids[2], "a"}}
	turns := append([]db.TurnLease{{ids[0], "a"}, {ids[1], "a"}, {uuid.New(), "a"}}, renew...)
	held, renewed, err := store.Heartbeat(ctx, turns, renew, ttl)
	require.NoError(t, err)
	require.Equal(t, map[db.TurnLease]thread.Status{
		{ids[0], "a"}: thread.StatusRunning,
		{ids[1], "a"}: thread.StatusAborted, // the turn sees the abort
		{ids[3], "b"}: thread.StatusRunning,
	}, held, "released, another's, and unknown threads' leases are not held")
	require.Equal(t, map[db.TurnLease]bool{{ids[3], "b"}: true}, renewed)

	for i, id := range ids {
		th, err := store.Thread(ctx, id)
		require.NoError(t, err)
		if i == 3 {
			require.WithinDuration(t, time.Now().Add(ttl), th.LeaseExpires, time.Minute, "b's lease renewed")
		} else if i != 2 {
			require.WithinDuration(t, time.Now().Add(leaseTTL), th.LeaseExpires, time.Minute, "a look renews nothing")
		}
	}

	t.Run("ALockedLeaseIsSkipped", func(t *testing.T) {
		// A step being recorded holds the row: the renewal does not wait.
		tx, err := store.Pool().Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, "SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", ids[0])
		require.NoError(t, err)
		both := []db.TurnLease{{ids[0], "a"}, {ids[3], "b"}}
		held, renewed, err := store.Heartbeat(ctx, both, both, ttl)
		require.NoError(t, err)
		require.Len(t, held, 2, "still held")
		require.Equal(t, map[db.TurnLease]bool{{ids[3], "b"}: true}, renewed)
	})

	held, renewed, err = store.Heartbeat(ctx, nil, nil, ttl)
	require.NoError(t, err)
	require.Empty(t, held)
	require.Empty(t, renewed)
}

func TestTurnWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	answer := func(through int64) []thread.Stitch {
		return []thread.Stitch{{Type: thread.StitchLLMCall, Content: "done", Metadata: thread.Meta{AnsweredThrough: through}.JSON()}}
	}

	t.Run("LastStepGivesTheLeaseUp", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		_, st := startOn(t, store, th.ID, "a")
		n := int64(len(st.Chain))
		got, err := store.Write(ctx, db.Write{ThreadID: th.ID, Stitches: answer(n),
			Status: &thread.StatusChange{To: thread.StatusCompleted, Result: []byte(`{"result":"done"}`)}, Turn: &db.TurnHold{Owner: "a", Release: true, Count: n + 1}})
		require.NoError(t, err)
		require.True(t, got.Released)
		require.Equal(t, n+1, got.Stitches[0].Seq)
		cur, err := store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.StatusCompleted, cur.Status)
		require.Empty(t, cur.LeaseOwner)
		require.True(t, cur.LeaseExpires.IsZero())
	})

	t.Run("InputArrivedMeanwhileKeepsTheLease", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		_, st := startOn(t, store, th.ID, "a")
		n := int64(len(st.Chain))
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchInitialPrompt, Content: "one more thing"})
		require.NoError(t, err)
		got, err := store.Write(ctx, db.Write{ThreadID: th.ID, Stitches: answer(n),
			Status: &thread.StatusChange{To: thread.StatusCompleted, Result: []byte(`{"result":"done"}`)}, Turn: &db.TurnHold{Owner: "a", Release: true, Count: n + 1}})
		require.NoError(t, err)
		require.False(t, got.Released)
		require.Equal(t, n+2, got.Stitches[0].Seq, "written after the new input")
		require.Nil(t, got.Thread, "the thread did not settle")
		cur, err := store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, "a", cur.LeaseOwner)
		// Should the turn's replica die now, the thread is running under a
		// lease that lapses (the sweep's), never resting with input unanswered.
		require.Equal(t, thread.StatusRunning, cur.Status)
		require.Nil(t, cur.Result)
	})

	t.Run("AStepBeforeTheLastKeepsTheLease", func(t *testing.T) {
		th := dbtest.Thread(ctx, t, store, nil)
		_, st := startOn(t, store, th.ID, "a")
		n := int64(len(st.Chain))
		got, err := store.Write(ctx, db.Write{ThreadID: th.ID, Stitches: answer(n), Turn: &db.TurnHold{Owner: "a", Count: n + 1}})
		require.NoError(t, err)
		require.False(t, got.Released)
		cur, err := store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, "a", cur.LeaseOwner)
		require.Equal(t, thread.StatusRunning, cur.Status)
	})

	refused := []struct {
		name   string
		change func(t *testing.T, id uuid.UUID, head uuid.UUID)
	}{
		{"Aborted", func(t *testing.T, id, _ uuid.UUID) {
			_, err := store.SetStatus(ctx, id, thread.StatusChange{To: thread.StatusAborted})
			require.NoError(t, err)
		}},
		{"LeaseTakenOver", func(t *testing.T, id, head uuid.UUID) {
			_, err := store.Pool().Exec(ctx, `UPDATE threads SET lease_expires_at = now() - interval '1 second' WHERE thread_id = $1`, id)
			require.NoError(t, err)
			_, err = store.StartTurn(ctx, id, db.TurnStart{Owner: "b", TTL: leaseTTL, Status: thread.StatusRunning, Head: head})
			require.NoError(t, err)
		}},
		{"LeaseReleased", func(t *testing.T, id, _ uuid.UUID) {
			require.NoError(t, store.ReleaseLease(ctx, id, "a"))
		}},
	}
	// A step with stitches is checked by its first append, one without by
	// a statement of its own: both refuse alike.
	for _, tt := range refused {
		for _, withStitches := range []bool{true, false} {
			t.Run(fmt.Sprintf("RefusedWhen%s/stitches=%t", tt.name, withStitches), func(t *testing.T) {
				th := dbtest.Thread(ctx, t, store, nil)
				_, st := startOn(t, store, th.ID, "a")
				n := int64(len(st.Chain))
				tt.change(t, th.ID, st.Chain[n-1].ID)
				var stitches []thread.Stitch
				if withStitches {
					stitches = answer(n)
				}
				_, err := store.Write(ctx, db.Write{ThreadID: th.ID, Stitches: stitches,
					Outbox: []thread.Outbox{{Platform: thread.PlatformLinear, Target: "s", Kind: thread.OutboxResponse, Body: thread.OutboxBody{Text: "done"}.JSON()}},
					Status: &thread.StatusChange{To: thread.StatusCompleted, Result: []byte(`{"result":"done"}`)}, Turn: &db.TurnHold{Owner: "a", Release: true, Count: n + 1}})
				require.ErrorIs(t, err, thread.ErrAborted)
				requireChain(t, store, th.ID, int(n))
				rows, err := store.ThreadOutbox(ctx, th.ID)
				require.NoError(t, err)
				require.Empty(t, rows, "nothing written")
				cur, err := store.Thread(ctx, th.ID)
				require.NoError(t, err)
				require.NotEqual(t, thread.StatusCompleted, cur.Status)
			})
		}
	}
}

// TestUnflushedCommitsLeaveTheConnection checks that the lease's and the
// sent mark's unflushed commits are theirs alone: on a one-connection
// pool, whatever runs next on that connection still waits for its flush.
func TestUnflushedCommitsLeaveTheConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPoolOf(t, 1)
	store := db.New(pool, dbtest.Logger(t))
	synchronous := func() string {
		t.Helper()
		var v string
		require.NoError(t, pool.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&v))
		return v
	}
	require.Equal(t, "on", synchronous())

	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	startOn(t, store, th.ID, "a")
	require.Equal(t, "on", synchronous(), "after StartTurn")

	o, err := store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
		Target: "session-1", Kind: thread.OutboxThought, Body: []byte(`{"body":"On it."}`)})
	require.NoError(t, err)
	_, err = store.ClaimOutbox(ctx, o.ID, time.Minute)
	require.NoError(t, err)
	_, err = store.MarkOutboxSent(ctx, o.ID, "activity-1")
	require.NoError(t, err)
	require.Equal(t, "on", synchronous(), "after MarkOutboxSent")
	sent, err := store.Outbox(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, thread.OutboxSent, sent.Status)
}

// TestStuckTurnJobs lists only turn jobs running past the grace that never
// held their thread's lease, while no turn holds it live.
func TestStuckTurnJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	const kind = "weft_turn"
	type lease struct {
		owner string // "self" for the job's own owner name
		live  bool
	}
	tests := []struct {
		name   string
		kind   string
		state  string
		age    time.Duration
		marked bool
		lease  *lease
		listed bool
	}{
		{name: "NeverLeased", kind: kind, state: "running", age: 5 * time.Minute, listed: true},
		{name: "WithinGrace", kind: kind, state: "running", age: 10 * time.Second},
		{name: "OwnLeaseLapsed", kind: kind, state: "running", age: 5 * time.Minute, lease: &lease{owner: "self"}},
		{name: "OwnLeaseLive", kind: kind, state: "running", age: 5 * time.Minute, lease: &lease{owner: "self", live: true}},
		{name: "OtherLeaseLive", kind: kind, state: "running", age: 5 * time.Minute, lease: &lease{owner: "replica-b/job-1", live: true}},
		{name: "OtherLeaseLapsed", kind: kind, state: "running", age: 5 * time.Minute, lease: &lease{owner: "replica-b/job-1"}, listed: true},
		{name: "MarkedForCancel", kind: kind, state: "running", age: 5 * time.Minute, marked: true},
		{name: "Completed", kind: kind, state: "completed", age: 5 * time.Minute},
		{name: "OtherKind", kind: "weft_delivery", state: "running", age: 5 * time.Minute},
	}
	want := map[int64]string{}
	for _, tt := range tests {
		th := dbtest.Thread(ctx, t, store, nil)
		metadata := `{}`
		if tt.marked {
			metadata = `{"cancel_attempted_at":"2026-01-01T00:00:00Z"}`
		}
		var id int64
		require.NoError(t, store.Pool().QueryRow(ctx, `INSERT INTO river_job (kind, args, max_attempts, queue, state, attempt, attempted_at, metadata, finalized_at)
			VALUES ($1, jsonb_build_object('thread_id', $2::text), 5, 'turns', $3::river_job_state, 1, now() - $4 * interval '1 second', $5,
			        CASE WHEN $3::river_job_state = 'completed' THEN now() END) RETURNING id`,
			tt.kind, th.ID.String(), tt.state, tt.age.Seconds(), metadata).Scan(&id))
		if l := tt.lease; l != nil {
			owner := l.owner
			if owner == "self" {
				owner = db.TurnOwner("replica-a", id)
			}
			expires := "now() - interval '1 second'"
			if l.live {
				expires = "now() + interval '30 seconds'"
			}
			_, err := store.Pool().Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = $2, lease_expires_at = `+expires+` WHERE thread_id = $1`, th.ID, owner)
			require.NoError(t, err)
		}
		if tt.listed {
			want[id] = tt.name
		}
	}
	stuck, err := store.StuckTurnJobs(ctx, kind, time.Minute, 100)
	require.NoError(t, err)
	got := map[int64]string{}
	for _, s := range stuck {
		got[s.JobID] = want[s.JobID]
		if got[s.JobID] == "" {
			got[s.JobID] = "unexpected"
		}
	}
	require.Equal(t, want, got)
}
