package ingest_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/logtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

type linearBundle struct {
	pool  *pgxpool.Pool
	store *db.Store
	ing   *ingest.Ingester
}

func setupLinear(t *testing.T) *linearBundle {
	t.Helper()
	return newLinearBundle(t, dbtest.NewPool(t), dbtest.Logger(t), "")
}

// newLinearBundle is an ingester on pool that logs to logger, opening new
// threads' system prompts with persona ("" for the default).
func newLinearBundle(t *testing.T, pool *pgxpool.Pool, logger *slog.Logger, persona string) *linearBundle {
	t.Helper()
	// An insert-only River client: jobs are written, never worked, so
	// the test sees exactly what ingest enqueued.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	store := db.New(pool, logger)
	return &linearBundle{pool: pool, store: store, ing: ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger, Persona: persona})}
}

func session(id string) surfacelinear.Session {
	return surfacelinear.Session{
		Attachment: thread.LinearAttachment{
			SessionID: id, WorkspaceID: "org-1", IssueID: "issue-" + id, IssueIdentifier: "ENG-7",
			IssueTitle: "Fix the login redirect", TeamID: "team-1", CommentID: "comment-" + id, CreatedByUserID: "user-1",
		},
		Goal:       "ENG-7: Fix the login redirect",
		Prompt:     `<issue identifier="ENG-7"><title>Fix the login redirect</title></issue>`,
		Creator:    &thread.Author{ID: "user-1", Name: "Ada"},
		StartIssue: true,
	}
}

func delivery(key, action string) thread.Inbound {
	return thread.Inbound{DeliveryID: uuid.NewString(), EventKey: key, EventType: "AgentSessionEvent", Action: action,
		Payload: []byte(`{"type":"AgentSessionEvent"}`)}
}

func prompt(activityID, text string) surfacelinear.Prompt {
	return surfacelinear.Prompt{ActivityID: activityID, Text: text, Author: &thread.Author{ID: "user-1", Name: "Ada"}}
}

// state is what a session's ingest left behind, in a comparable form.
type state struct {
	Status        thread.Status
	SessionStatus thread.SessionStatus
	Stitches      []string // type/source/external id
	Outbox        []string // kind/target/text
	TurnJobs      int
	StartJobs     int
	DeliveryJobs  int
}

func (b *linearBundle) state(t *testing.T, sessionID string) state {
	t.Helper()
	ctx := context.Background()
	th, err := b.store.ThreadByLinearSession(ctx, sessionID)
	require.NoError(t, err)
	att, err := b.store.LinearAttachment(ctx, th.ID)
	require.NoError(t, err)
	st := state{Status: th.Status, SessionStatus: att.SessionStatus}
	stitches, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	for _, s := range stitches {
		st.Stitches = append(st.Stitches, string(s.Type)+"/"+string(s.Source)+"/"+s.ExternalID)
	}
	rows, err := b.store.ThreadOutbox(ctx, th.ID)
	require.NoError(t, err)
	for _, o := range rows {
		body, err := o.Content()
		require.NoError(t, err)
		st.Outbox = append(st.Outbox, string(o.Kind)+"/"+o.Target+"/"+body.Text)
	}
	st.TurnJobs = b.jobs(t, "weft_turn", th.ID.String())
	st.DeliveryJobs = b.jobs(t, "weft_delivery", th.ID.String())
	st.StartJobs = b.jobs(t, "weft_linear_start_issue", "")
	return st
}

func (b *linearBundle) jobs(t *testing.T, kind, threadID string) int {
	t.Helper()
	var n int
	err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job
		WHERE kind = $1 AND ($2 = '' OR args->>'thread_id' = $2)`, kind, threadID).Scan(&n)
	require.NoError(t, err)
	return n
}

func (b *linearBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func TestLinearCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ThreadAckAndTurnInOneGo", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		d := delivery("s1", "created")
		res, err := b.ing.Record(ctx, surfacelinear.Created(d, session("s1")))
		require.NoError(t, err)
		require.False(t, res.Duplicate)
		require.Equal(t, state{
			Status: thread.StatusPending, SessionStatus: thread.SessionActive,
			Stitches: []string{"system_prompt//", "initial_prompt/linear/s1"},
			Outbox:   []string{"thought/s1/" + surfacelinear.Ack},
			TurnJobs: 1, DeliveryJobs: 1, StartJobs: 1,
		}, b.state(t, "s1"))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries
			WHERE platform = 'linear' AND delivery_id = $1 AND event_key = 's1' AND outcome = 'processed' AND thread_id = $2`,
			d.DeliveryID, res.ThreadID))
	})

	t.Run("AutomationDoesNotStartTheIssue", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		s := session("s1")
		s.StartIssue, s.Creator = false, nil
		_, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), s))
		require.NoError(t, err)
		require.Zero(t, b.state(t, "s1").StartJobs)
	})

	t.Run("RedeliveryChangesNothing", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		d := delivery("s1", "created")
		_, err := b.ing.Record(ctx, surfacelinear.Created(d, session("s1")))
		require.NoError(t, err)
		before := b.state(t, "s1")
		again := delivery("s1", "created") // same event, new delivery id
		for _, dd := range []thread.Inbound{d, again} {
			res, err := b.ing.Record(ctx, surfacelinear.Created(dd, session("s1")))
			require.NoError(t, err)
			require.True(t, res.Duplicate)
		}
		require.Equal(t, before, b.state(t, "s1"))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries`))
	})

	t.Run("InvalidIsRecordedIgnored", func(t *testing.T) {
		// Signed but unusable: the ledger keeps it as ignored, and
		// nothing else is written, so that it is not retried forever.
		t.Parallel()
		b := setupLinear(t)
		s := session("s1")
		s.Attachment.CreatedByUserID = ""
		res, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), s))
		require.NoError(t, err)
		require.True(t, res.Ignored)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE outcome = 'ignored'`))
		require.Zero(t, b.count(t, `SELECT count(*) FROM threads`))
	})
}

func TestLinearPrompted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("AppendsInputAndReopens", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		res, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		// The turn answered and the session completed.
		_, err = b.store.SetStatus(ctx, res.ThreadID, thread.StatusChange{To: thread.StatusRunning})
		require.NoError(t, err)
		_, err = b.store.SetStatus(ctx, res.ThreadID, thread.StatusChange{To: thread.StatusCompleted, Result: []byte(`"done"`)})
		require.NoError(t, err)
		require.NoError(t, b.store.SetLinearSessionStatus(ctx, "s1", thread.SessionComplete))

		got, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery("a1", "prompted"), session("s1"), prompt("a1", "also fix the footer")))
		require.NoError(t, err)
		require.Equal(t, res.ThreadID, got.ThreadID, "a follow-up reopens the same thread")
		st := b.state(t, "s1")
		require.Equal(t, []string{"system_prompt//", "initial_prompt/linear/s1", "linear_activity/linear/a1"}, st.Stitches)
		require.Equal(t, thread.SessionActive, st.SessionStatus)
		require.Equal(t, 2, st.TurnJobs)
		s, err := b.store.StitchByExternalID(ctx, thread.PlatformLinear, "a1")
		require.NoError(t, err)
		require.Equal(t, "also fix the footer", s.Content)
		require.Equal(t, &thread.Author{ID: "user-1", Name: "Ada"}, s.Author)

		again, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery("a1", "prompted"), session("s1"), prompt("a1", "also fix the footer")))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, st, b.state(t, "s1"))
	})

	t.Run("BeforeCreatedEndsAsInOrder", func(t *testing.T) {
		t.Parallel()
		inOrder, outOfOrder := setupLinear(t), setupLinear(t)
		_, err := inOrder.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		_, err = inOrder.ing.Record(ctx, surfacelinear.Prompted(delivery("a1", "prompted"), session("s1"), prompt("a1", "go")))
		require.NoError(t, err)

		early, err := outOfOrder.ing.Record(ctx, surfacelinear.Prompted(delivery("a1", "prompted"), session("s1"), prompt("a1", "go")))
		require.NoError(t, err)
		late, err := outOfOrder.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		require.False(t, late.Duplicate, "the created delivery is recorded")
		require.Equal(t, early.ThreadID, late.ThreadID)

		want, got := inOrder.state(t, "s1"), outOfOrder.state(t, "s1")
		// In order, each event enqueues a turn; out of order the first
		// turn answers both. Extra turns find nothing to do.
		require.Equal(t, 2, want.TurnJobs)
		require.Equal(t, 1, got.TurnJobs)
		want.TurnJobs, got.TurnJobs = 0, 0
		require.Equal(t, want, got)
	})

	t.Run("ConcurrentCreatedAndPromptedMakeOneThread", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		errs := make(chan error, 2)
		go func() {
			_, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
			errs <- err
		}()
		go func() {
			_, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery("a1", "prompted"), session("s1"), prompt("a1", "go")))
			errs <- err
		}()
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM threads`))
		st := b.state(t, "s1")
		require.Equal(t, []string{"system_prompt//", "initial_prompt/linear/s1", "linear_activity/linear/a1"}, st.Stitches)
		require.Len(t, st.Outbox, 1)
	})

	// Prompts for one session arriving together each link their ledger row
	// to the thread (a foreign key check: a key share on its row) before
	// appending to it (the row's lock). With FOR UPDATE, which waits on key
	// shares, two of them deadlocked.
	t.Run("ConcurrentPromptsNeverDeadlock", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		_, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		const n = 24
		var wg sync.WaitGroup
		errs := make(chan error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				id := fmt.Sprintf("a%d", i)
				_, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery(id, "prompted"), session("s1"), prompt(id, "and "+id)))
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		th, err := b.store.ThreadByLinearSession(ctx, "s1")
		require.NoError(t, err)
		chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		require.Len(t, chain, n+2)
		for i, s := range chain {
			require.Equal(t, int64(i+1), s.Seq)
			if i > 0 {
				require.Equal(t, chain[i-1].ID, s.PreviousID, "the chain is intact")
			}
		}
	})
}

func TestLinearStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stop := func(id string) surfacelinear.Prompt {
		p := prompt(id, "Stop")
		p.Stop = true
		return p
	}
	wantStop := "response/s1/" + surfacelinear.Stopped

	t.Run("AbortsAndConfirms", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		res, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		_, err = b.store.SetStatus(ctx, res.ThreadID, thread.StatusChange{To: thread.StatusRunning})
		require.NoError(t, err)

		_, err = b.ing.Record(ctx, surfacelinear.Prompted(delivery("stop1", "prompted"), session("s1"), stop("stop1")))
		require.NoError(t, err)
		st := b.state(t, "s1")
		require.Equal(t, thread.StatusAborted, st.Status, "the running turn's heartbeat sees this and stops")
		require.Equal(t, thread.SessionComplete, st.SessionStatus)
		require.Equal(t, []string{"system_prompt//", "initial_prompt/linear/s1", "linear_activity/linear/stop1", "agent_thought//"}, st.Stitches)
		require.Equal(t, []string{"thought/s1/" + surfacelinear.Ack, wantStop}, st.Outbox)
		require.Equal(t, 1, st.TurnJobs, "a stop enqueues no turn")

		chain, err := b.store.Stitches(ctx, res.ThreadID, db.StitchPage{})
		require.NoError(t, err)
		require.Equal(t, int64(3), chain[3].Meta().AnsweredThrough, "the stop prompt is answered by the stop")

		// A prompt afterwards reopens the thread.
		_, err = b.ing.Record(ctx, surfacelinear.Prompted(delivery("a2", "prompted"), session("s1"), prompt("a2", "carry on")))
		require.NoError(t, err)
		require.Equal(t, 2, b.state(t, "s1").TurnJobs)
	})

	t.Run("OnFinishedThreadStillConfirms", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		_, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		_, err = b.ing.Record(ctx, surfacelinear.Prompted(delivery("stop1", "prompted"), session("s1"), stop("stop1")))
		require.NoError(t, err)
		_, err = b.ing.Record(ctx, surfacelinear.Prompted(delivery("stop2", "prompted"), session("s1"), stop("stop2")))
		require.NoError(t, err)
		st := b.state(t, "s1")
		require.Equal(t, thread.StatusAborted, st.Status)
		require.Equal(t, []string{"thought/s1/" + surfacelinear.Ack, wantStop, wantStop}, st.Outbox)
	})

	t.Run("BeforeCreatedNeedsNoAck", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		_, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery("stop1", "prompted"), session("s1"), stop("stop1")))
		require.NoError(t, err)
		res, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
		require.NoError(t, err)
		require.False(t, res.Duplicate)
		st := b.state(t, "s1")
		require.Equal(t, thread.StatusAborted, st.Status)
		require.Equal(t, []string{wantStop}, st.Outbox)
		require.Equal(t, 1, st.TurnJobs, "the first turn finds the stop and does nothing")
	})
}

func TestLinearRevokedAndIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupLinear(t)
	require.NoError(t, b.store.SaveLinearInstallation(ctx, db.LinearInstallation{
		OrganizationID: "org-1", AppUserID: "app-1", AccessTokenEnc: []byte("sealed"),
	}))
	d := thread.Inbound{DeliveryID: uuid.NewString(), EventKey: "OAuthApp/revoked/org-1/t", EventType: "OAuthApp", Action: "revoked"}
	res, err := b.ing.Record(ctx, surfacelinear.Revoked(d, "org-1"))
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	inst, err := b.store.LinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.False(t, inst.Active)
	res, err = b.ing.Record(ctx, surfacelinear.Revoked(d, "org-1"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)

	ign := thread.Inbound{DeliveryID: uuid.NewString(), EventKey: "Issue/update/org-1/t", EventType: "Issue", Action: "update"}
	res, err = b.ing.Record(ctx, surfacelinear.Ignored(ign))
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	res, err = b.ing.Record(ctx, surfacelinear.Ignored(ign))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE outcome = 'ignored' AND delivery_id = $1`, ign.DeliveryID))
}

// TestLinearCreatedInABurst sends new sessions faster than a small pool
// opens them one by one, so that they share transactions (see openings),
// and checks each ends as if it had come alone; redeliveries among them,
// under the same and a new delivery id, fail a shared transaction and are
// sorted out by halves.
func TestLinearCreatedInABurst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two connections: one new-session transaction at a time, the rest
	// queue. The ingester's log shows when a batch was refused and split.
	logger, logs := logtest.Recording(t)
	b := newLinearBundle(t, dbtest.NewPoolOf(t, 2), logger, "")

	alone := state{Status: thread.StatusPending, SessionStatus: thread.SessionActive, TurnJobs: 1, DeliveryJobs: 1}
	check := func(t *testing.T, ids []string, fresh map[string]int) {
		t.Helper()
		for _, id := range ids {
			require.Equal(t, 1, fresh[id], "session %s opened once", id)
			got := b.state(t, id)
			want := alone
			want.Stitches = []string{"system_prompt//", "initial_prompt/linear/" + id}
			want.Outbox = []string{"thought/" + id + "/" + surfacelinear.Ack}
			want.StartJobs = got.StartJobs // counted across sessions below
			require.Equal(t, want, got, "session %s", id)
		}
	}
	// burst sends every delivery at once and counts, per session, the
	// deliveries that opened it; each must get its own session's thread.
	type call struct {
		id string
		d  thread.Inbound
	}
	burst := func(t *testing.T, calls []call) map[string]int {
		t.Helper()
		var mu sync.Mutex
		fresh := map[string]int{}
		var wg sync.WaitGroup
		for _, c := range calls {
			wg.Go(func() {
				s := session(c.id)
				s.Goal = c.id
				res, err := b.ing.Record(ctx, surfacelinear.Created(c.d, s))
				require.NoError(t, err)
				if res.Duplicate {
					return
				}
				th, err := b.store.Thread(ctx, res.ThreadID)
				require.NoError(t, err)
				require.Equal(t, c.id, th.Goal, "the thread of the session delivered")
				mu.Lock()
				fresh[c.id]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return fresh
	}

	t.Run("NewSessionsShareTransactions", func(t *testing.T) {
		var ids []string
		var calls []call
		for i := range 40 {
			id := fmt.Sprintf("burst-%02d", i)
			ids = append(ids, id)
			calls = append(calls, call{id, delivery(id, "created")})
		}
		check(t, ids, burst(t, calls))
		// Rows a transaction writes share its id (xmin): fewer
		// transactions than sessions means sessions were batched.
		txs := b.count(t, `SELECT count(DISTINCT xmin::text) FROM threads WHERE goal LIKE 'burst-%'`)
		require.Less(t, txs, len(ids))
		t.Logf("%d sessions in %d transactions", len(ids), txs)
	})

	t.Run("RedeliveriesAmongThem", func(t *testing.T) {
		var ids []string
		var calls []call
		for i := range 30 {
			id := fmt.Sprintf("again-%02d", i)
			ids = append(ids, id)
			d := delivery(id, "created")
			calls = append(calls, call{id, d}, call{id, d}, call{id, delivery(id, "created")})
		}
		rand.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
		check(t, ids, burst(t, calls))
		require.Equal(t, len(ids), b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE event_key LIKE 'again-%'`))
	})
	t.Run("SomePromptedFirst", func(t *testing.T) {
		// Sessions whose prompted event made the thread already refuse
		// their batch; each ends with its one thread, as in order.
		early := map[string]uuid.UUID{}
		var ids, fresh []string
		var calls []call
		for i := range 30 {
			id := fmt.Sprintf("mixed-%02d", i)
			ids = append(ids, id)
			calls = append(calls, call{id, delivery(id, "created")})
			if i%3 != 0 {
				fresh = append(fresh, id)
				continue
			}
			s := session(id)
			s.Goal = id
			res, err := b.ing.Record(ctx, surfacelinear.Prompted(delivery("p-"+id, "prompted"), s, prompt("p-"+id, "go")))
			require.NoError(t, err)
			early[id] = res.ThreadID
		}
		opened := burst(t, calls)
		require.Contains(t, logs.String(), "trying them by halves", "a batch was refused and split")
		for _, id := range ids {
			require.Equal(t, 1, opened[id], "session %s: its created delivery recorded once", id)
			th, err := b.store.ThreadByLinearSession(ctx, id)
			require.NoError(t, err)
			if want, ok := early[id]; ok {
				require.Equal(t, want, th.ID, "the thread the prompt made")
				require.Len(t, b.state(t, id).Outbox, 1, "one acknowledgement")
			}
		}
		check(t, fresh, opened)
	})
	require.Equal(t, 100, b.state(t, "burst-00").StartJobs)
}
