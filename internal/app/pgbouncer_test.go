package app

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// startPgBouncer runs Debian's pgbouncer in transaction pooling in front of
// the database of dbURL and returns dbURL through it. Without pgbouncer
// the test is skipped, except in CI (CI=true), where .ci/deps installs it
// and its absence fails the test.
func startPgBouncer(t *testing.T, dbURL string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer" // Debian's, off a non-root PATH
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("pgbouncer is not installed (apt-get install pgbouncer); .ci/deps installs it")
			}
			t.Skip("pgbouncer is not installed (the test fails under CI=true)")
		}
	}
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	listen := servetest.Addr(t)
	_, listenPort, _ := net.SplitHostPort(listen)

	// pgbouncer will not run as root: as root it drops to postgres, which
	// must reach its files (t.TempDir's parent is root's alone).
	dir, err := os.MkdirTemp("", "weft-pgbouncer-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var args []string
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root, pgbouncer needs a user to run as")
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
		args = append(args, "-u", "postgres")
	}
	users := filepath.Join(dir, "users.txt")
	require.NoError(t, os.WriteFile(users, fmt.Appendf(nil, "%q \"\"\n", u.User.Username()), 0o644))
	ini := filepath.Join(dir, "pgbouncer.ini")
	require.NoError(t, os.WriteFile(ini, fmt.Appendf(nil, `[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
logfile = %s
pidfile = %s
`, host, port, listenPort, users, filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid")), 0o644))

	cmd := exec.Command(bin, append(args, ini)...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Logf("pgbouncer output:\n%s\n%s", out.String(), log)
		}
	})
	require.Eventually(t, func() bool {
		select {
		case <-exited:
			return false // its output is logged as the test fails
		default:
		}
		c, err := net.Dial("tcp", listen)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, 10*time.Second, 10*time.Millisecond, "pgbouncer never listened")
	u.Host = listen
	return u.String()
}

// TestThroughPgBouncer runs two `weft serve` replicas on DATABASE_URL
// through PgBouncer in transaction pooling, with River's coordinator on the
// direct connection (WEFT_DATABASE_DIRECT_URL) or in River's poll-only mode.
// A Linear session and a Slack thread each wait on the model when the
// replica holding the Linear turn is SIGKILLed: the other answers both,
// each answer posted once, no input lost.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		direct bool
	}{{"DirectURL", true}, {"PollOnly", false}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			throughPgBouncer(t, tt.direct)
		})
	}
}

func throughPgBouncer(t *testing.T, direct bool) {
	ctx := context.Background()
	const (
		token, secret   = "lin_api_bouncer", "whsec-bouncer"
		linearQuestion  = "Which team owns billing?"
		slackQuestion   = "who is on call?"
		leaseTTL        = 3 * time.Second
		slackChannel    = "C0BOUNCE"
		answerForLinear = "Billing is the payments team's."
	)
	dbURL := dbtest.URL(t)
	pooled := startPgBouncer(t, dbURL)
	lin := lineartest.NewServer(t)
	lin.AddToken(token, lineartest.OrganizationID)
	signer := lineartest.Signer{Secret: []byte(secret)}
	sl := slacktest.NewServer(t)
	sl.AddChannel(slackChannel, "channel")
	ada := slacktest.User{ID: "U0ADA", Name: "ada"}
	fake := llmtest.NewServer(t)
	// Every model call waits until a replica is dead: the survivor's as
	// well as the victim's.
	killed := make(chan struct{})
	var killOnce sync.Once
	release := func() { killOnce.Do(func() { close(killed) }) }
	t.Cleanup(release) // before the fake closes: it waits for its handlers
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		<-killed
		if mentions(r, linearQuestion) {
			return llmtest.Reply{Text: answerForLinear}
		}
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content}
	})

	vars := map[string]string{
		"DATABASE_URL":      pooled,
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.OpenAIBaseURL(),
		"LINEAR_WEBHOOK_SECRET": secret, "LINEAR_ACCESS_TOKEN": token, "LINEAR_API_URL": lin.URL(),
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "SLACK_API_URL": sl.APIURL(),
		"WEFT_LEASE_TTL": leaseTTL.String(), "WEFT_SWEEP_INTERVAL": "1s", "WEFT_LOG_LEVEL": "warn",
	}
	if direct {
		vars["WEFT_DATABASE_DIRECT_URL"] = dbURL
	} else {
		vars["WEFT_DATABASE_POOLER"] = "transaction"
	}
	replicas := map[int]*child{}
	urls := map[int]string{}
	for range 2 {
		addr := servetest.Addr(t)
		v := maps.Clone(vars)
		v["WEFT_ADDR"] = addr
		c := startWeft(t, v)
		servetest.WaitReady(t, "http://"+addr)
		replicas[c.cmd.Process.Pid], urls[c.cmd.Process.Pid] = c, "http://"+addr
	}
	var first string
	for pid := range urls {
		first = urls[pid]
		break
	}
	sl.DeliverTo(first + "/webhooks/slack")

	d, s := signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), PromptContext: linearQuestion})
	lin.AddSession(s.SessionID, s.IssueID)
	deliverLinear(t, first, d)
	q := sl.Post(ada, slackChannel, "", "<@"+slacktest.BotUserID+"> "+slackQuestion)
	// Both model calls, in whichever order they come.
	var sawLinear, sawSlack bool
	waitRequest(t, fake, func(r llmtest.Request) bool {
		sawLinear = sawLinear || mentions(r, linearQuestion)
		sawSlack = sawSlack || mentions(r, slackQuestion)
		return sawLinear && sawSlack
	})

	// Both turns are in their model call, under a replica's lease.
	store, pool, err := Open(ctx, &Config{DatabaseURL: dbURL}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	lth, err := store.ThreadByLinearSession(ctx, s.SessionID)
	require.NoError(t, err)
	sth, err := store.ThreadBySlackThread(ctx, slacktest.TeamID, slackChannel, q.TS)
	require.NoError(t, err)
	cur, err := store.Thread(ctx, lth.ID)
	require.NoError(t, err)
	// A lease owner is host/pid/id, then the job (processor.New).
	parts := strings.Split(cur.LeaseOwner, "/")
	require.GreaterOrEqual(t, len(parts), 3, "the Linear turn holds the lease: %q", cur.LeaseOwner)
	pid, err := strconv.Atoi(parts[1])
	require.NoError(t, err)
	victim := replicas[pid]
	require.NotNil(t, victim, "the lease is a replica's: %q", cur.LeaseOwner)
	victim.kill(t)
	release()
	for p, u := range urls {
		if p != pid {
			// Slack retries to the door that is left, as its load
			// balancer would.
			sl.DeliverTo(u + "/webhooks/slack")
		}
	}

	waitSettled(t, store, lth.ID)
	waitSettled(t, store, sth.ID)
	var responses []string
	for _, act := range lin.Activities(s.SessionID) {
		if act.Type == "response" {
			responses = append(responses, act.Body)
		}
	}
	require.Equal(t, []string{answerForLinear}, responses, "the Linear answer posted once")
	var answers []string
	for _, m := range sl.BotMessages(slackChannel) {
		if m.ThreadTS == q.TS {
			answers = append(answers, m.Text)
		}
	}
	require.Equal(t, []string{"Answer to: " + slackQuestion}, answers, "the Slack answer posted once")
	for _, id := range []uuid.UUID{lth.ID, sth.ID} {
		th, err := store.Thread(ctx, id)
		require.NoError(t, err)
		require.Equal(t, thread.StatusWaiting, th.Status)
	}
}

// TestDatabasePoolerConfig: a direct URL implies DATABASE_URL goes through
// a transaction pooler; WEFT_DATABASE_POOLER names only that one; behind
// it the pools keep no prepared statement, unless the URL says otherwise.
func TestDatabasePoolerConfig(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(env(map[string]string{"WEFT_DATABASE_DIRECT_URL": "postgres://db:5432/weft"}))
	require.NoError(t, err)
	require.Equal(t, "transaction", cfg.DatabasePooler)
	cfg, err = LoadConfig(env(nil))
	require.NoError(t, err)
	require.Empty(t, cfg.DatabasePooler)
	_, err = LoadConfig(env(map[string]string{"WEFT_DATABASE_POOLER": "session"}))
	require.ErrorContains(t, err, "WEFT_DATABASE_POOLER")

	for _, tt := range []struct {
		pooler, url string
		mode        pgx.QueryExecMode
	}{
		{"", dbtest.URL(t), pgx.QueryExecModeCacheStatement},
		{"transaction", dbtest.URL(t), pgx.QueryExecModeCacheDescribe},
		{"transaction", WithQuery(dbtest.URL(t), "default_query_exec_mode", "exec"), pgx.QueryExecModeExec},
	} {
		_, pool, err := Open(context.Background(), &Config{DatabaseURL: tt.url, DatabasePooler: tt.pooler}, dbtest.Logger(t))
		require.NoError(t, err)
		require.Equal(t, tt.mode, pool.Config().ConnConfig.DefaultQueryExecMode, tt.pooler)
		pool.Close()
	}
}
