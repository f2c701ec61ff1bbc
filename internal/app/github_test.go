package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// githubWorld is `weft serve` running in-process with GitHub on, against
// githubtest (signed deliveries, the REST API weft calls) and a fake LLM.
type githubWorld struct {
	base  string
	store *db.Store
	llm   *llmtest.Server
	gh    *githubtest.Server
	inst  int64
	bob   githubtest.User
}

const githubRepo = "acme/api"

func newGitHubWorld(t *testing.T) *githubWorld {
	t.Helper()
	fake := githubtest.NewServer(t)
	w := &githubWorld{llm: llmtest.NewServer(t), gh: fake, bob: githubtest.User{ID: 501, Login: "bob", Type: "User"}}
	w.inst = fake.Install(githubtest.User{ID: 77, Login: "acme", Type: "Organization"}, githubRepo)
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content}
	})
	url := dbtest.URL(t)
	addr := servetest.Addr(t)
	vars := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": addr, "WEFT_LOG_LEVEL": "warn",
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.llm.OpenAIBaseURL(),
		"GITHUB_APP_ID": "424242", "GITHUB_PRIVATE_KEY": string(fake.PrivateKeyPEM()), "GITHUB_WEBHOOK_SECRET": githubtest.WebhookSecret,
		"GITHUB_APP_SLUG": githubtest.AppSlug, "GITHUB_API_URL": fake.URL(), "WEFT_API_TOKEN": metricsToken,
	}
	w.base = servetest.Serve(t, addr, func(ctx context.Context) error { return runServe(ctx, env(vars), &bytes.Buffer{}) })
	fake.DeliverTo(w.base + "/webhooks/github")
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	w.store = store
	return w
}

// comment posts a comment by bob on issue n and delivers it.
func (w *githubWorld) comment(t *testing.T, n int, body string) githubtest.Comment {
	t.Helper()
	c := w.gh.AddComment(githubRepo, n, w.bob, body)
	d := w.gh.Deliver(githubapi.EventIssueComment, w.gh.CommentPayload(w.inst, "created", githubRepo, n, c))
	require.NoError(t, d.Err)
	require.Equal(t, http.StatusOK, d.Status)
	return c
}

// answers waits until the app posted at least n comments on issue n.
func (w *githubWorld) answers(t *testing.T, number, n int) []githubtest.Comment {
	t.Helper()
	var got []githubtest.Comment
	require.Eventually(t, func() bool {
		got = w.gh.BotComments(githubRepo, number)
		return len(got) >= n
	}, 30*time.Second, 10*time.Millisecond, "weft never posted %d comments", n)
	return got
}

// thread is the weft thread attached to issue n.
func (w *githubWorld) thread(t *testing.T, n int) *thread.Thread {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, w.store.Pool().QueryRow(context.Background(),
		"SELECT thread_id FROM github_thread_metadata WHERE number = $1 AND review_root_id IS NULL", n).Scan(&id))
	th, err := w.store.Thread(context.Background(), id)
	require.NoError(t, err)
	return th
}

func (w *githubWorld) deliveries(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, w.store.Pool().QueryRow(context.Background(),
		"SELECT count(*) FROM webhook_deliveries WHERE platform = 'github'").Scan(&n))
	return n
}

// TestGitHubConversation: a mention gets 👀 and an answer comment carrying
// its outbox row's marker; a follow-up mention's prompt holds the history;
// a redelivery answers nothing more.
func TestGitHubConversation(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()
	n := w.gh.AddIssue(githubRepo, w.bob, "Flaky test", "It fails on Tuesdays", false)

	w.comment(t, n, "@weft-test why does it fail?")
	require.Eventually(t, func() bool {
		is := w.gh.Issue(githubRepo, n)
		return len(is.Comments[0].Reactions) == 1 && is.Comments[0].Reactions[0].Content == githubapi.ReactionEyes
	}, 30*time.Second, 10*time.Millisecond, "no 👀 on the mention")
	got := w.answers(t, n, 1)
	require.True(t, strings.HasPrefix(got[0].Body, "Answer to: "), got[0].Body)
	require.Contains(t, got[0].Body, "why does it fail?")
	require.Len(t, githubapi.Markers(got[0].Body), 1)
	first := w.llm.Requests()[0]
	require.Contains(t, first.System, `<github_issue repository="acme/api" number="`, "the issue is in the prompt")
	require.Contains(t, first.System, "It fails on Tuesdays")

	th := w.thread(t, n)
	waitSettled(t, w.store, th.ID)
	rows, err := w.store.ThreadOutbox(ctx, th.ID)
	require.NoError(t, err)
	var answerID string
	for _, o := range rows {
		if o.Kind == thread.OutboxResponse || o.Kind == thread.OutboxMessage {
			answerID = o.ID.String()
		}
	}
	require.NotEmpty(t, answerID)
	require.Contains(t, got[0].Body, githubapi.Marker(answerID, 0), "the answer carries its outbox row's id")

	// A redelivery of the mention changes nothing.
	before := w.deliveries(t)
	d := w.gh.Redeliver(w.gh.Deliveries().All()[0].ID)
	require.Equal(t, http.StatusOK, d.Status)
	require.Equal(t, before, w.deliveries(t))

	w.comment(t, n, "no idea, really")
	w.comment(t, n, "@weft-test and now?")
	got = w.answers(t, n, 2)
	require.Len(t, got, 2, "the redelivery and the unmentioned comment are not answered")
	waitSettled(t, w.store, th.ID)
	reqs := w.llm.Requests()
	var history []string
	for _, m := range reqs[len(reqs)-1].Messages {
		history = append(history, m.Content)
	}
	require.Len(t, history, 4, "%q", history)
	require.Contains(t, history[0], "why does it fail?")
	require.Contains(t, history[2], "no idea, really")
	require.Contains(t, history[3], "and now?")
	require.Len(t, w.llm.Requests(), 2)
}

// TestGitHubRefusals: forged, truncated and oversized (over GitHub's
// 25 MB) deliveries get a 4xx, and nothing is written. A genuine delivery
// too large to parse is acknowledged and recorded as ignored. A stale
// retry of a delivery weft has, the same X-GitHub-Delivery or the same
// signed body under a new one (the header is not signed), is acknowledged
// and writes nothing: GitHub signs no timestamp, so age cannot be told,
// and its own redeliveries must not fail.
func TestGitHubRefusals(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()
	n := w.gh.AddIssue(githubRepo, w.bob, "t", "", false)
	c := w.gh.AddComment(githubRepo, n, w.bob, "@weft-test hi")
	body, err := json.Marshal(w.gh.CommentPayload(w.inst, "created", githubRepo, n, c))
	require.NoError(t, err)
	good := w.gh.Sign(githubapi.EventIssueComment, body)
	post := func(d githubtest.Delivery, chunked bool) int {
		var r io.Reader = bytes.NewReader(d.Body)
		if chunked {
			r = io.MultiReader(r) // no length known: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/github", r)
		require.NoError(t, err)
		req.Header = d.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	threads := func() int {
		var n int
		require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM github_thread_metadata").Scan(&n))
		return n
	}
	forged := githubtest.SignWith("wrong", good.ID, good.Event, body)
	truncated := good
	truncated.Body = body[:len(body)/2]
	big := w.gh.Sign(githubapi.EventIssueComment, append(bytes.Repeat([]byte(" "), githubapi.MaxPayload), body...))
	require.Equal(t, http.StatusUnauthorized, post(forged, false))
	require.Equal(t, http.StatusUnauthorized, post(truncated, false))
	require.Equal(t, http.StatusRequestEntityTooLarge, post(big, false))
	require.Equal(t, http.StatusRequestEntityTooLarge, post(big, true), "read up to 25 MB, then refused")
	require.Zero(t, w.deliveries(t))
	require.Zero(t, threads())

	large := w.gh.Sign(githubapi.EventIssueComment, append(bytes.Repeat([]byte(" "), githubapi.MaxParsed), body...))
	require.Equal(t, http.StatusOK, post(large, true))
	var outcome string
	require.NoError(t, w.store.Pool().QueryRow(ctx,
		"SELECT outcome FROM webhook_deliveries WHERE platform = 'github' AND delivery_id = $1", large.ID).Scan(&outcome))
	require.Equal(t, string(thread.InboundIgnored), outcome)
	require.Zero(t, threads())

	require.Equal(t, http.StatusOK, post(good, false), "the genuine delivery still goes through")
	require.Equal(t, 2, w.deliveries(t))
	require.Equal(t, 1, threads())
	w.answers(t, n, 1)
	// Stale retries: the same delivery again, and its body under a new id.
	require.Equal(t, http.StatusOK, post(good, false))
	replay := good
	replay.Header = good.Header.Clone()
	replay.Header.Set(githubapi.HeaderDelivery, uuid.NewString())
	require.Equal(t, http.StatusOK, post(replay, false))
	require.Equal(t, 2, w.deliveries(t), "nothing written")
	require.Equal(t, 1, threads())
	th := w.thread(t, n)
	waitSettled(t, w.store, th.ID)
	require.Len(t, w.gh.BotComments(githubRepo, n), 1, "one answer")
	require.Equal(t, 1, w.llm.Calls())
}

// TestGitHubReviewDelegationEdits: a review comment's thread is its own
// conversation, answered in that thread; an issue assigned to the app is
// worked and acknowledged with 👀 on the issue; an edit and a delete
// change the kept comment without a turn.
func TestGitHubReviewDelegationEdits(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()

	pr := w.gh.AddIssue(githubRepo, w.bob, "Speed up", "Makes it faster", true)
	root := w.gh.AddReviewComment(githubRepo, pr, w.bob, "main.go", "@weft-test is this loop safe?", 0)
	d := w.gh.Deliver(githubapi.EventReviewComment, w.gh.ReviewCommentPayload(w.inst, "created", githubRepo, pr, root))
	require.Equal(t, http.StatusOK, d.Status)
	got := w.answers(t, pr, 1)
	require.Equal(t, root.ID, got[0].InReplyTo, "answered in the review thread")
	require.Contains(t, got[0].Body, "is this loop safe?")
	require.Contains(t, w.llm.Requests()[0].System, "<github_pull_request", "the pull request is in the prompt")
	var roots int
	require.NoError(t, w.store.Pool().QueryRow(ctx,
		"SELECT count(*) FROM github_thread_metadata WHERE number = $1 AND review_root_id = $2", pr, root.ID).Scan(&roots))
	require.Equal(t, 1, roots)

	n := w.gh.AddIssue(githubRepo, w.bob, "Rename the flag", "Call it --fast", false)
	bot := githubtest.Bot
	d = w.gh.Deliver(githubapi.EventIssues, w.gh.IssuesPayload(w.inst, "assigned", githubRepo, n, w.bob, &bot))
	require.Equal(t, http.StatusOK, d.Status)
	got = w.answers(t, n, 1)
	require.Contains(t, got[0].Body, "Call it --fast")
	require.Eventually(t, func() bool {
		rs := w.gh.Issue(githubRepo, n).Reactions
		return len(rs) == 1 && rs[0].Content == githubapi.ReactionEyes
	}, 30*time.Second, 10*time.Millisecond, "no 👀 on the delegated issue")
	th := w.thread(t, n)
	waitSettled(t, w.store, th.ID)

	c := w.comment(t, n, "a typo: --fsat")
	calls := w.llm.Calls()
	c.Body = "a typo: --fast"
	d = w.gh.Deliver(githubapi.EventIssueComment, w.gh.CommentPayload(w.inst, "edited", githubRepo, n, c))
	require.Equal(t, http.StatusOK, d.Status)
	s, err := w.store.StitchByExternalID(ctx, thread.PlatformGitHub, thread.GitHubCommentID(false, c.ID))
	require.NoError(t, err)
	require.Equal(t, "a typo: --fast", s.Content)
	d = w.gh.Deliver(githubapi.EventIssueComment, w.gh.CommentPayload(w.inst, "deleted", githubRepo, n, c))
	require.Equal(t, http.StatusOK, d.Status)
	s, err = w.store.StitchByExternalID(ctx, thread.PlatformGitHub, thread.GitHubCommentID(false, c.ID))
	require.NoError(t, err)
	require.False(t, s.DeletedAt.IsZero())
	waitSettled(t, w.store, th.ID)
	require.Equal(t, calls, w.llm.Calls(), "an edit or a delete runs no turn")
}

// TestGitHubUninstall: once the account uninstalls the app, its later
// deliveries are acknowledged and dropped.
func TestGitHubUninstall(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()
	d := w.gh.Deliver(githubapi.EventInstallation, w.gh.InstallationPayload(w.inst, "created", w.bob))
	require.Equal(t, http.StatusOK, d.Status)
	d = w.gh.Deliver(githubapi.EventInstallation, w.gh.InstallationPayload(w.inst, "deleted", w.bob))
	require.Equal(t, http.StatusOK, d.Status)
	var removed bool
	require.NoError(t, w.store.Pool().QueryRow(ctx,
		"SELECT removed_at IS NOT NULL FROM github_installations WHERE installation_id = $1", w.inst).Scan(&removed))
	require.True(t, removed)

	n := w.gh.AddIssue(githubRepo, w.bob, "t", "", false)
	w.comment(t, n, "@weft-test still there?")
	var outcome string
	require.NoError(t, w.store.Pool().QueryRow(ctx,
		"SELECT outcome FROM webhook_deliveries WHERE platform = 'github' AND delivery_id = $1", w.gh.Deliveries().All()[2].ID).Scan(&outcome))
	require.Equal(t, string(thread.InboundIgnored), outcome)
	var threads int
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM github_thread_metadata").Scan(&threads))
	require.Zero(t, threads)
}

// TestGitHubCrashBeforePostPostsOnce kills `weft serve` with SIGKILL while
// the answer's comment is posted on GitHub but before weft heard back: a
// new process sends the row again, finds its marker among the newest
// comments, and GitHub shows the answer exactly once.
func TestGitHubCrashBeforePostPostsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	model := llmtest.NewServer(t)
	model.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "Here is the answer."} })
	fake := githubtest.NewServer(t)
	bob := githubtest.User{ID: 501, Login: "bob", Type: "User"}
	inst := fake.Install(githubtest.User{ID: 77, Login: "acme", Type: "Organization"}, githubRepo)
	// The first answer is posted, then its response hangs until the
	// process dies.
	fake.Fail("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 1, fakekit.Fault{Apply: true, Delay: time.Hour})
	addr := servetest.Addr(t)
	weftEnv := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": addr, "WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": model.OpenAIBaseURL(), "WEFT_LEASE_TTL": "2s", "WEFT_SWEEP_INTERVAL": "500ms",
		"GITHUB_APP_ID": "424242", "GITHUB_PRIVATE_KEY": string(fake.PrivateKeyPEM()), "GITHUB_WEBHOOK_SECRET": githubtest.WebhookSecret,
		"GITHUB_APP_SLUG": githubtest.AppSlug, "GITHUB_API_URL": fake.URL(),
	}
	store, pool, err := Open(ctx, &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer pool.Close()
	first := startWeft(t, weftEnv)
	servetest.WaitReady(t, "http://"+addr)
	fake.DeliverTo("http://" + addr + "/webhooks/github")

	n := fake.AddIssue(githubRepo, bob, "t", "", false)
	c := fake.AddComment(githubRepo, n, bob, "@weft-test what is the answer?")
	d := fake.Deliver(githubapi.EventIssueComment, fake.CommentPayload(inst, "created", githubRepo, n, c))
	require.Equal(t, http.StatusOK, d.Status)
	require.Eventually(t, func() bool { return len(fake.BotComments(githubRepo, n)) == 1 },
		time.Minute, 20*time.Millisecond, "the answer was never posted")
	first.kill(t)
	startWeft(t, weftEnv)

	var id uuid.UUID
	require.NoError(t, store.Pool().QueryRow(ctx, "SELECT thread_id FROM github_thread_metadata WHERE number = $1", n).Scan(&id))
	require.Eventually(t, func() bool {
		rows, err := store.ThreadOutbox(ctx, id)
		require.NoError(t, err)
		for _, o := range rows {
			if o.Kind == thread.OutboxResponse && o.Status == thread.OutboxSent {
				return true
			}
		}
		return false
	}, 2*time.Minute, 50*time.Millisecond, "the answer's row was never completed")
	got := fake.BotComments(githubRepo, n)
	require.Len(t, got, 1, "exactly one comment")
	require.Contains(t, got[0].Body, "Here is the answer.")
	require.Equal(t, 1, model.Calls(), "the recorded answer was not asked for again")
}
