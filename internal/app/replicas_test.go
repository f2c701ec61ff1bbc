package app

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestFollowUpOutlivesTheReplicaAnsweringIt runs two `weft serve` replicas
// on one database. Replica A is in its model call for a Linear session's
// first question when a follow-up reaches replica B's door, and A is
// killed (SIGKILL): during that call, or after it recorded its answer to
// the first question and before it went on to the follow-up. The latter is
// the moment at which a turn that settled its thread over input it had not
// seen left that input to rest unanswered. Either way the thread stays
// running under A's lease, and B answers the follow-up once that lease
// lapses, not when a sweep comes by; each input is answered, and posted,
// once.
func TestFollowUpOutlivesTheReplicaAnsweringIt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		// answered is whether A records its answer before it dies.
		answered bool
		// responses are the answers the Linear session shows in the end.
		responses []string
	}{
		{"KilledMidCall", false, []string{"second answer"}},
		{"KilledAfterItsAnswer", true, []string{"first answer", "second answer"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			followUpOutlivesReplica(t, tt.answered, tt.responses)
		})
	}
}

func followUpOutlivesReplica(t *testing.T, answered bool, responses []string) {
	ctx := context.Background()
	const (
		token, secret = "lin_api_replicas", "whsec-replicas"
		question      = "Which service owns the login redirect?"
		followUp      = "And who reviews changes to it?"
		// leaseTTL bounds how long after A's death B may take the thread.
		leaseTTL = 5 * time.Second
		// takeOver is what B needs past the lapse: its turn job tries the
		// thread every 250 ms (LeaseWait, fetched within the 100 ms poll),
		// then one step against a model that answers at once. The sweep,
		// every hour here, cannot be what answers within it.
		takeOver = 5 * time.Second
	)
	dbURL := dbtest.URL(t)
	lin := lineartest.NewServer(t)
	lin.AddToken(token, lineartest.OrganizationID)
	signer := lineartest.Signer{Secret: []byte(secret)}
	fake := llmtest.NewServer(t)
	answer := make(chan struct{}) // closed when A's first call may return
	var answerOnce sync.Once
	letAnswer := func() { answerOnce.Do(func() { close(answer) }) }
	t.Cleanup(letAnswer) // before the fake closes: it waits for its handlers
	var killed atomic.Bool
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		switch {
		case !mentions(r, followUp):
			<-answer // A's call is in flight when the follow-up arrives
			return llmtest.Reply{Text: "first answer"}
		case !killed.Load():
			return llmtest.Reply{Delay: time.Hour} // A must not get this far
		}
		return llmtest.Reply{Text: "second answer"}
	})

	base := map[string]string{
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.OpenAIBaseURL(),
		"LINEAR_WEBHOOK_SECRET": secret, "LINEAR_ACCESS_TOKEN": token, "LINEAR_API_URL": lin.URL(),
		"WEFT_LEASE_TTL": leaseTTL.String(), "WEFT_SWEEP_INTERVAL": "1h", "WEFT_LOG_LEVEL": "debug",
	}
	// replica starts `weft serve` whose connections carry name, so the
	// test can see in pg_stat_activity what the replica waits on.
	replica := func(name string, more map[string]string) (*child, string) {
		t.Helper()
		addr := servetest.Addr(t)
		vars := maps.Clone(base)
		vars["DATABASE_URL"], vars["WEFT_ADDR"] = withAppName(t, dbURL, name), addr
		maps.Copy(vars, more)
		c := startWeft(t, vars)
		servetest.WaitReady(t, "http://"+addr)
		return c, "http://" + addr
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()

	// A's one turn worker stays on the session's turn, so the follow-up's
	// turn job is B's: a job of A's would die with A, and only a sweep
	// could answer then.
	a, aURL := replica("weft-a", map[string]string{"WEFT_TURN_WORKERS": "1"})
	d, s := signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), PromptContext: question})
	lin.AddSession(s.SessionID, s.IssueID)
	deliverLinear(t, aURL, d)
	waitRequest(t, fake, func(r llmtest.Request) bool { return mentions(r, question) })
	_, bURL := replica("weft-b", nil)
	deliverLinear(t, bURL, signer.Prompted(s, uuid.NewString(), followUp))
	th, err := store.ThreadByLinearSession(ctx, s.SessionID)
	require.NoError(t, err)
	chain, err := store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	follow := lastInput(chain)
	require.Equal(t, followUp, follow.Content)

	var hold pgx.Tx
	if answered {
		// Hold A between recording its answer and reading the thread
		// again: that read (TurnState's InputSurface) joins
		// slack_thread_metadata, which nothing else of a Linear turn
		// touches.
		hold, err = pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = hold.Rollback(ctx) }()
		_, err = hold.Exec(ctx, `LOCK TABLE slack_thread_metadata IN ACCESS EXCLUSIVE MODE`)
		require.NoError(t, err)
		letAnswer()
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND application_name = 'weft-a' AND wait_event_type = 'Lock' AND query LIKE '%InputSurface%'`).Scan(&n))
			return n > 0
		}, time.Minute, 20*time.Millisecond, "replica A never went on to read the thread after its answer")
		chain, err = store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		first := answers(chain)
		require.Len(t, first, 1, "A recorded its answer")
		require.Less(t, first[0].Meta().AnsweredThrough, follow.Seq, "the answer is to the first question only")
	}
	cur, err := store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusRunning, cur.Status, "the thread settled with the follow-up unanswered")
	require.NotEmpty(t, cur.LeaseOwner, "A's turn holds the lease")

	// A's posts are out before it dies: a delivery job A took and did not
	// claim yet would wait for the sweep, which is not what this tests.
	allSent := func() bool {
		rows, err := store.ThreadOutbox(ctx, th.ID)
		require.NoError(t, err)
		for _, r := range rows {
			if r.Status != thread.OutboxSent {
				return false
			}
		}
		return true
	}
	require.Eventually(t, allSent, time.Minute, 20*time.Millisecond, "A's posts were never sent")
	a.kill(t)
	killed.Store(true)
	if hold != nil {
		require.NoError(t, hold.Rollback(ctx))
	}
	deadline := time.Now().Add(leaseTTL + takeOver)
	for {
		// The thread first: a chain read after it that answers nothing
		// answered nothing when the thread was read either.
		cur, err = store.Thread(ctx, th.ID)
		require.NoError(t, err)
		chain, err = store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		if answeredThrough(chain) >= follow.Seq {
			break
		}
		require.Equal(t, thread.StatusRunning, cur.Status, "the thread rests with the follow-up unanswered")
		require.True(t, time.Now().Before(deadline), "the follow-up was not answered within the lease TTL (%s) and %s", leaseTTL, takeOver)
		time.Sleep(20 * time.Millisecond)
	}

	var turns int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND args->>'thread_id' = $1`,
		th.ID.String()).Scan(&turns))
	require.Equal(t, 2, turns, "the inputs' own turn jobs answered them, not one a sweep enqueued")
	require.Len(t, answers(chain), len(responses), "one answer per turn that finished")
	require.Equal(t, 2, fake.Calls(), "no call was made twice")

	require.Eventually(t, allSent, time.Minute, 50*time.Millisecond, "B's answer was never posted")
	var got []string
	for _, act := range lin.Activities(s.SessionID) {
		if act.Type == "response" {
			got = append(got, act.Body)
		}
	}
	require.Equal(t, responses, got, "each answer posted once")
}

// withAppName is the database URL u with application_name set.
func withAppName(t *testing.T, u, name string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err)
	q := parsed.Query()
	q.Set("application_name", name)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

func deliverLinear(t *testing.T, base string, d lineartest.Delivery) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/linear", bytes.NewReader(d.Body))
	require.NoError(t, err)
	req.Header = d.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func mentions(r llmtest.Request, text string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

func lastInput(chain []thread.Stitch) thread.Stitch {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Type.IsInput() {
			return chain[i]
		}
	}
	return thread.Stitch{}
}

func answers(chain []thread.Stitch) []thread.Stitch {
	var out []thread.Stitch
	for _, s := range chain {
		if s.Type == thread.StitchLLMCall {
			out = append(out, s)
		}
	}
	return out
}

func answeredThrough(chain []thread.Stitch) int64 {
	var n int64
	for _, s := range chain {
		n = max(n, s.Meta().AnsweredThrough)
	}
	return n
}
