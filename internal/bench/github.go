package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// Targets of issue 27 item 9.
const (
	targetGitHubEyesP99   = 500 * time.Millisecond
	targetGitHubAnswerP99 = time.Second
	// benchGitHubRateLimit lifts the fake's primary rate limit, requests
	// an hour, above anything the bench asks for: it measures weft, not
	// GitHub's allowance.
	benchGitHubRateLimit = 100_000_000
	benchGitHubRepo      = "acme/api"
)

// githubBench is one `weft bench github` run: weft serve as a child
// process with GitHub on, githubtest delivering signed webhooks to it and
// taking its REST calls, and the fake model behind a timing proxy.
type githubBench struct {
	gh *githubtest.Server
	*served
	url  string // weft's /webhooks/github
	inst int64
	user githubtest.User
}

// githubMention is one mention the bench delivered: its issue, its
// comment, its tag, and when its delivery was sent.
type githubMention struct {
	number  int
	comment int64
	tag     int
	sent    time.Time
}

// benchGitHub drives a real weft serve (`weft-bench serve`, a child
// process, on a scratch database) through githubtest with an instant fake
// model. -mentions issues each get a comment mentioning the app, delivered
// open-loop at -rate; each is timed from its delivery to 👀 on it at the
// fake (the express acknowledgement) and to the answer comment at the
// fake, less the model's time. Then signed issue_comment deliveries that
// mention nobody go at -ack-rate to weft's door, each timed to its
// acknowledgement, and the same to the anchor, a minimal signed handler.
func benchGitHub(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench github", flag.ContinueOnError)
	mentions := fs.Int("mentions", 100, "issues, each opened to weft by a comment mentioning the app")
	rate := fs.Int("rate", 10, "mentions delivered per second")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the mentions' 👀 and answers")
	ackDuration := fs.Duration("ack-duration", 10*time.Second, "how long the acknowledgement run lasts")
	ackRate := fs.Int("ack-rate", 200, "webhook deliveries per second in the acknowledgement run")
	sc := scratchFlags(fs, "weft_bench_github")
	anchorServe := fs.String("anchor-serve", "", "serve the acknowledgements' anchor on this address (how the bench starts it as its child)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *anchorServe != "" {
		return serveGitHubAnchor(ctx, cfg.DatabaseURL, *anchorServe, []byte(cfg.GitHub.WebhookSecret))
	}
	if *mentions < 1 || *rate < 1 || *wait <= 0 || *ackRate < 1 || *ackDuration <= 0 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := startGitHubBench(ctx, url)
	if err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "weft-bench github: weft serve pid %d on scratch database %s; fakes: githubtest (REST + signed webhook deliveries), llmtest (model answering at once)\n\n", b.proc.PID(), *sc.name)
	mentionOK, err := b.mentions(ctx, stdout, *mentions, *rate, *wait)
	if err != nil {
		return err
	}
	ackOK, err := b.acknowledgements(ctx, stdout, url, *ackRate, *ackDuration)
	if err != nil {
		return err
	}
	return b.overall(stdout, mentionOK && ackOK)
}

func startGitHubBench(ctx context.Context, url string) (*githubBench, error) {
	gh := githubtest.NewServer(nil)
	b := &githubBench{gh: gh, user: githubtest.User{ID: 501, Login: "ada", Type: "User"}}
	b.inst = gh.Install(githubtest.User{ID: 77, Login: "acme", Type: "Organization"}, benchGitHubRepo)
	gh.SetRateLimit(b.inst, benchGitHubRateLimit)
	var err error
	b.served, err = startServed(ctx, url, "all", true, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "The deploys fail on the migration lock; release it and retry."}
	}, githubEnv(gh)...)
	if err != nil {
		gh.Close()
		return nil, err
	}
	b.url = "http://" + b.addr + "/webhooks/github"
	gh.DeliverTo(b.url)
	return b, nil
}

// githubEnv is weft serve's settings for the fake GitHub gh.
func githubEnv(gh *githubtest.Server) []string {
	return []string{"GITHUB_APP_ID=" + strconv.Itoa(githubtest.AppID), "GITHUB_PRIVATE_KEY=" + string(gh.PrivateKeyPEM()),
		"GITHUB_WEBHOOK_SECRET=" + githubtest.WebhookSecret, "GITHUB_APP_SLUG=" + githubtest.AppSlug, "GITHUB_API_URL=" + gh.URL()}
}

func (b *githubBench) close(logger *slog.Logger) {
	b.stop(logger)
	b.gh.Close()
}

// mentions delivers n mentions, each on an issue of its own, at rate, and
// times each to its 👀 and its answer at the fake. It prints their figures
// and returns whether their targets were met.
func (b *githubBench) mentions(ctx context.Context, stdout io.Writer, n, rate int, wait time.Duration) (bool, error) {
	ms := make([]githubMention, n)
	for i := range ms {
		ms[i].number = b.gh.AddIssue(benchGitHubRepo, b.user, fmt.Sprintf("Billing deploy %d fails", i), "It fails on the migration step.", false)
		ms[i].tag = i
	}
	startup := len(b.gh.Calls())
	var failed atomic.Int64
	lag, err := kit.Pace(ctx, rate, n, func(i int) error {
		c := b.gh.AddComment(benchGitHubRepo, ms[i].number, b.user, fmt.Sprintf("@%s %s why does the billing deploy fail?", githubtest.AppSlug, kit.Tag(i)))
		ms[i].comment = c.ID
		payload := b.gh.CommentPayload(b.inst, "created", benchGitHubRepo, ms[i].number, c)
		ms[i].sent = time.Now()
		go func() {
			if d := b.gh.Deliver(githubapi.EventIssueComment, payload); d.Err != nil || d.Status != http.StatusOK {
				failed.Add(1)
			}
		}()
		return nil
	})
	if err != nil {
		return false, err
	}
	eyes, answers, own, model, missing := b.await(ctx, ms, wait)
	calls := b.gh.Calls()[startup:]
	fmt.Fprintf(stdout, "Mentions: %d at %d/s, each on an issue of its own (generator lag max %s): %d 👀, %d answered\n",
		n, rate, kit.Ms(lag), len(eyes), len(answers))
	tw := kit.NewTable(stdout, 50, 99, 100)
	eyesOK := missing == 0 && eyes.Percentile(99) <= targetGitHubEyesP99
	ownOK := missing == 0 && own.Percentile(99) <= targetGitHubAnswerP99
	tw.Row("mention → 👀 at fake", eyes, fmt.Sprintf("p99 ≤ %s %s", targetGitHubEyesP99, kit.Verdict(eyesOK)))
	tw.Row("mention → answer comment at fake, our time", own, fmt.Sprintf("p99 ≤ %s %s", targetGitHubAnswerP99, kit.Verdict(ownOK)))
	tw.Row("  of which end to end (model included)", answers, "")
	tw.Row("  of which model calls (excluded)", model, "")
	if err := tw.Flush(); err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "REST calls per mention: %s\n", perRoute(calls, n))
	if missing > 0 || failed.Load() > 0 {
		return false, fmt.Errorf("%d of %d mentions got no 👀 or no answer within %s (%d deliveries not 200)\nweft serve stderr:\n%s",
			missing, n, wait, failed.Load(), b.proc.Stderr())
	}
	return eyesOK && ownOK, nil
}

// await waits up to wait for every mention's 👀 and answer at the fake,
// read from its call log (when it answered each), and returns their
// latencies and how many mentions lack either.
func (b *githubBench) await(ctx context.Context, ms []githubMention, wait time.Duration) (eyes, answers, own, model kit.Latencies, missing int) {
	deadline := time.Now().Add(wait)
	for {
		eyesAt, answerAt := map[string]time.Time{}, map[string]time.Time{}
		for _, c := range b.gh.Calls() {
			if c.Status != http.StatusCreated && c.Status != http.StatusOK {
				continue
			}
			switch c.Route {
			case "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":
				if _, ok := eyesAt[c.URL]; !ok {
					eyesAt[c.URL] = c.Answered
				}
			case "POST /repos/{owner}/{repo}/issues/{issue_number}/comments":
				if _, ok := answerAt[c.URL]; !ok {
					answerAt[c.URL] = c.Answered
				}
			}
		}
		eyes, answers, own, model, missing = nil, nil, nil, nil, 0
		for _, m := range ms {
			e, ok1 := eyesAt[fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", benchGitHubRepo, m.comment)]
			a, ok2 := answerAt[fmt.Sprintf("/repos/%s/issues/%d/comments", benchGitHubRepo, m.number)]
			if !ok1 || !ok2 {
				missing++
				continue
			}
			spent := b.timer.Spent(m.tag)
			eyes = append(eyes, e.Sub(m.sent))
			answers = append(answers, a.Sub(m.sent))
			model = append(model, spent)
			own = append(own, a.Sub(m.sent)-spent)
		}
		if missing == 0 || time.Now().After(deadline) || retry.Sleep(ctx, 200*time.Millisecond) != nil {
			return eyes.Sorted(), answers.Sorted(), own.Sorted(), model.Sorted(), missing
		}
	}
}

// acknowledgements times signed issue_comment deliveries that mention
// nobody, on an issue weft has no thread for (recorded in the ledger as
// ignored, answered by no turn), open-loop at rate for d, on weft, then on
// the anchor (a minimal signed handler on the database at url) once
// weft's run is over; it prints both and returns whether weft is within
// targetAnchorAckRatio of the anchor.
func (b *githubBench) acknowledgements(ctx context.Context, stdout io.Writer, url string, rate int, d time.Duration) (bool, error) {
	n := int(d.Seconds() * float64(rate))
	number := b.gh.AddIssue(benchGitHubRepo, b.user, "Chatter", "", false)
	bodies := make([][]byte, n)
	for i := range bodies {
		c := b.gh.AddComment(benchGitHubRepo, number, b.user, fmt.Sprintf("chatter %d", i))
		var err error
		if bodies[i], err = json.Marshal(b.gh.CommentPayload(b.inst, "created", benchGitHubRepo, number, c)); err != nil {
			return false, err
		}
	}
	acks, anchorAcks, err := acksBesideAnchor(ctx, b.url, rate, n, func(i int) kit.Delivery {
		d := githubtest.SignWith(githubtest.WebhookSecret, fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), githubapi.EventIssueComment, bodies[i])
		return kit.Delivery{Body: d.Body, Header: d.Header}
	}, func() (*kit.Process, string, error) { return startGitHubAnchor(ctx, url) })
	if err != nil {
		return false, err
	}
	ok := acks.Failed == 0 && anchorRatio(acks, anchorAcks) <= targetAnchorAckRatio
	fmt.Fprintf(stdout, "\nWebhooks at %d/s for %s: %d deliveries, %d not acknowledged with 2xx%s (generator lag max %s); then the anchor, a minimal signed handler (read, verify X-Hub-Signature-256, one insert, one commit) on the same database, at the same rate: %d not 2xx\n",
		rate, d, n, acks.Failed, acks.Why(), kit.Ms(acks.Lag), anchorAcks.Failed)
	tw := kit.NewTable(stdout, 50, 99, 99.9, 100)
	ackRows(tw, acks, anchorAcks, fmt.Sprintf("p99 ≤ %d× the anchor's, all 2xx %s", targetAnchorAckRatio, kit.Verdict(ok)))
	return ok, tw.Flush()
}

// perRoute is the REST calls weft made per mention, by route.
func perRoute(calls []githubtest.Call, mentions int) string {
	count := map[string]int{}
	var order []string
	for _, c := range calls {
		r := c.Route
		if r == "" {
			r = c.Method + " " + c.URL
		}
		if count[r] == 0 {
			order = append(order, r)
		}
		count[r]++
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s %.1f", r, float64(count[r])/float64(max(mentions, 1)))
	}
	return fmt.Sprintf("%.1f (%s)", float64(len(calls))/float64(max(mentions, 1)), strings.Join(parts, ", "))
}
