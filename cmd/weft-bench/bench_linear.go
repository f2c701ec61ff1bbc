package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/benchmark"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// Targets from docs/architecture.md ("Numbers we hold ourselves to").
const (
	targetAckP99          = 25 * time.Millisecond
	targetCapacity        = 1000
	targetRSS             = 256 << 20
	targetFirstActivity   = 500 * time.Millisecond
	linearSteadyRate      = 500
	linearDeliveryTimeout = 5 * time.Second // Linear's answer deadline
	// targetAnswer is G1's bound on any answer, a 503 included: 40% of
	// Linear's deadline.
	targetAnswer = 2 * time.Second
	// A ramp step holds its rate when at least heldOK of its deliveries
	// got a 200 and their p99 stayed within heldP99 (G1's p99.9 bound):
	// past that, latency is heading for the deadline, or weft sheds.
	heldOK  = 0.999
	heldP99 = 100 * time.Millisecond
	// maxInFlight bounds the generator's outstanding requests: above the
	// webhook route's 64 in flight plus its backlog of 1,024, so it is
	// weft that sheds, not the generator that gives up.
	maxInFlight = 4096
)

// linearBench is one `weft bench linear` run: weft serve as a child process
// pointed at the fakes, and the signer that makes its deliveries.
type linearBench struct {
	linear  *lineartest.Server
	signer  lineartest.Signer
	load    *benchmark.Load
	serve   *benchmark.Process
	issueID string
	teamID  string
}

// benchLinear drives a real weft serve (`weft-bench serve`, as a child process,
// on a scratch database) with signed Linear `created` deliveries: ack
// latency at a steady 500/s, webhook to first activity, a rising rate
// until weft sheds, and weft's peak memory.
func benchLinear(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench linear", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Second, "how long the steady 500/s run lasts")
	warmup := fs.Duration("warmup", 4*time.Second, "how long the load rises, unmeasured, to the steady rate before the steady run: connections, caches and queues reach their steady state, as under a real day's load rather than a cold start")
	rate := fs.Int("rate", linearSteadyRate, "the steady run's deliveries per second")
	step := fs.Duration("step", 3*time.Second, "how long each step of the capacity ramp lasts")
	maxRate := fs.Int("max-rate", 8000, "the ramp's highest rate; 0 skips the ramp")
	modelDelay := fs.Duration("model-delay", time.Second, "how long the fake model takes to answer: turns are model-bound, as with a real model; 0 answers at once")
	role := fs.String("role", "all", "WEFT_ROLE of the weft serve under test: all, or api to time the webhook path alone (no turns; acknowledgements still go out by express)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the steady run's first activities")
	keep := fs.Bool("keep", false, "keep the scratch database afterwards")
	scratch := fs.String("db", "weft_bench_linear", "name of the scratch database (dropped first if it exists)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *rate < 1 || *duration <= 0 || *step <= 0 || *maxRate < 0 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := scratchDatabase(ctx, cfg, logger, *scratch, *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := startLinearBench(ctx, url, *role, *modelDelay)
	if err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "weft-bench linear: weft serve pid %d on scratch database %s; fakes: lineartest (Linear), llmtest (model answering in %s)\n\n", b.serve.PID(), *scratch, *modelDelay)

	pass := true
	if *warmup > 0 {
		// A quarter of the rate, a half, three quarters, then all of it.
		var ok, shed int
		for q := 1; q <= 4; q++ {
			r := max(1, *rate*q/4)
			deliveries, _ := b.created(r, *warmup/4)
			warm := benchmark.Count(b.load.Run(ctx, r, deliveries))
			ok, shed = ok+warm.OK, shed+warm.Shed
		}
		fmt.Fprintf(stdout, "Warm-up rising to %d/s over %s (not measured): %d × 200, %d × 503\n", *rate, *warmup, ok, shed)
	}
	// Steady rate: ack latency, then first activities.
	deliveries, sessions := b.created(*rate, *duration)
	results := b.load.Run(ctx, *rate, deliveries)
	steady := benchmark.Count(results)
	ackP99 := steady.Ack.Percentile(99)
	ackOK := ackP99 <= targetAckP99 && steady.OK == len(results)
	pass = pass && ackOK
	fmt.Fprintf(stdout, "Steady %d/s for %s: %d sent, %d × 200, %d × 503, %d other, %d failed\n", *rate, *duration, steady.Sent, steady.OK, steady.Shed, steady.Other, steady.Failed+steady.Saturated)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tsamples\tp50\tp99\tp99.9\tmax\ttarget\t")
	fmt.Fprintf(tw, "ack latency (200s)\t%d\t%s\t%s\t%s\t%s\tp99 ≤ %s, all 200 %s\t\n", len(steady.Ack), ms(steady.Ack.Percentile(50)), ms(ackP99),
		ms(steady.Ack.Percentile(99.9)), ms(steady.Ack.Percentile(100)), targetAckP99, verdict(ackOK))

	first, missing, err := b.firstActivities(ctx, results, sessions, *wait)
	if err != nil {
		return err
	}
	faP99 := first.Percentile(99)
	faOK := faP99 <= targetFirstActivity && missing == 0
	pass = pass && faOK
	fmt.Fprintf(tw, "webhook sent → first activity at fake\t%d\t%s\t%s\t%s\t%s\tp99 ≤ %s %s\t\n", len(first), ms(first.Percentile(50)), ms(faP99),
		ms(first.Percentile(99.9)), ms(first.Percentile(100)), targetFirstActivity, verdict(faOK))
	if err := tw.Flush(); err != nil {
		return err
	}
	if missing > 0 {
		fmt.Fprintf(stdout, "note: %d sessions had no activity within %s\n", missing, *wait)
	}

	if *maxRate > 0 {
		ok, err := b.ramp(ctx, stdout, *step, *maxRate)
		if err != nil {
			return err
		}
		pass = pass && ok
	}

	_, peak, err := b.serve.Memory()
	if err != nil {
		return err
	}
	pass = pass && peak <= targetRSS
	fmt.Fprintf(stdout, "\npeak RSS of weft serve (VmHWM): %s (target ≤ %s) %s\n", mib(peak), mib(targetRSS), verdict(peak <= targetRSS))
	fmt.Fprintf(stdout, "\noverall: %s\n", verdict(pass))
	return nil
}

// startLinearBench starts the fakes and weft serve on the database at url.
func startLinearBench(ctx context.Context, url, role string, modelDelay time.Duration) (_ *linearBench, err error) {
	const secret = "weft-bench-webhook-secret"
	b := &linearBench{linear: lineartest.NewServer(nil), signer: lineartest.Signer{Secret: []byte(secret)},
		issueID: uuid.NewString(), teamID: uuid.NewString()}
	model := llmtest.NewServer(nil)
	model.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "The redirect drops the return URL; keep it in the state parameter.", Delay: modelDelay}
	})
	defer func() {
		if err != nil {
			b.linear.Close()
			model.Close()
		}
	}()
	// One issue all sessions are on, so the turn's history lookup finds it.
	b.linear.AddTeam(lineartest.Team{ID: b.teamID, Key: "ENG", Name: "Engineering", States: []lineartest.State{
		{ID: uuid.NewString(), Name: "Todo", Type: "unstarted"}, {ID: uuid.NewString(), Name: "In Progress", Type: "started", Position: 1}}})
	b.linear.AddIssue(lineartest.Issue{ID: b.issueID, Identifier: "ENG-1", Title: "Fix the login redirect", TeamID: b.teamID})

	var addr string
	b.serve, addr, err = startServe(url, role, model.OpenAIBaseURL(),
		"LINEAR_WEBHOOK_SECRET="+secret, "LINEAR_ACCESS_TOKEN="+lineartest.AccessToken, "LINEAR_API_URL="+b.linear.URL())
	if err != nil {
		return nil, err
	}
	// The model fake lives as long as the server that calls it.
	go func() { <-b.serve.Done(); model.Close() }()
	if err := b.serve.WaitReady(ctx, "http://"+addr+"/readyz", 60*time.Second); err != nil {
		_ = b.serve.Stop(5 * time.Second)
		return nil, fmt.Errorf("%w\nweft serve stderr:\n%s", err, b.serve.Stderr())
	}
	b.load = benchmark.NewLoad("http://"+addr+"/webhooks/linear", linearDeliveryTimeout, maxInFlight)
	return b, nil
}

func (b *linearBench) close(logger *slog.Logger) {
	b.load.Close()
	if err := b.serve.Stop(15 * time.Second); err != nil {
		logger.Warn("stop weft serve", slog.Any("error", err), slog.String("stderr", b.serve.Stderr()))
	}
	b.linear.Close()
}

// created builds and signs a run's deliveries, rate a second for d, before
// the run starts: mentions opening new sessions on the fake's issue, each
// registered with the fake. It returns the deliveries and their session
// ids. Linear stamps a delivery when it sends it, so each is stamped with
// its place in the schedule as if the run started now: it goes out that
// fresh, but for the time the building took, however long the run.
func (b *linearBench) created(rate int, d time.Duration) ([]benchmark.Delivery, []string) {
	n := int(d.Seconds() * float64(rate))
	deliveries, sessions := make([]benchmark.Delivery, n), make([]string, n)
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		dl, o := b.signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), IssueID: b.issueID, TeamID: b.teamID,
			CommentBody: "@weft why does the login redirect lose the return URL?", PromptContext: "Why does the login redirect lose the return URL?",
			CreatedAt: at, Timestamp: at})
		b.linear.AddSession(o.SessionID, b.issueID)
		deliveries[i], sessions[i] = benchmark.Delivery{Body: dl.Body, Header: dl.Header}, o.SessionID
	}
	return deliveries, sessions
}

// firstActivities waits up to wait for each acknowledged session's first
// activity and returns, per session, the time from the delivery's send to
// the fake's receipt of it, and how many never came.
func (b *linearBench) firstActivities(ctx context.Context, results []benchmark.Result, sessions []string, wait time.Duration) (benchmark.Latencies, int, error) {
	sent := map[string]time.Time{}
	for i, r := range results {
		if r.Status == 200 {
			sent[sessions[i]] = r.Sent
		}
	}
	deadline := time.Now().Add(wait)
	for {
		first := map[string]time.Time{}
		for _, a := range b.linear.AllActivities() {
			if _, ok := sent[a.SessionID]; ok {
				if _, seen := first[a.SessionID]; !seen {
					first[a.SessionID] = a.CreatedAt
				}
			}
		}
		if len(first) == len(sent) || time.Now().After(deadline) {
			var out benchmark.Latencies
			for id, at := range first {
				out = append(out, at.Sub(sent[id]))
			}
			return out.Sorted(), len(sent) - len(first), nil
		}
		if err := retry.Sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, 0, err
		}
	}
}

// rampRates are the capacity ramp's steps, deliveries per second: fine
// below the 1,000/s target, so a capacity short of it is measured rather
// than rounded down to the steady rate.
var rampRates = []int{500, 600, 700, 800, 900, 1000, 1250, 1500, 2000, 3000, 4000, 6000, 8000}

// rampStep is what one step of the ramp measured.
type rampStep struct {
	rate int
	benchmark.Tally
	rss  int64
	held bool
}

// ramp raises the rate step by step until weft no longer holds it (see
// heldOK), then runs once more further out (twice the last rate held, or
// the next step if that is higher) to see it shed with 503s and its memory
// stay bounded. It prints a row per step and reports whether the capacity
// and shedding targets were met.
func (b *linearBench) ramp(ctx context.Context, stdout io.Writer, step time.Duration, maxRate int) (bool, error) {
	fmt.Fprintf(stdout, "\nCapacity ramp, %s per step (a step holds with ≥ %.1f%% 200s and ack p99 ≤ %s):\n", step, heldOK*100, heldP99)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate/s\tsent\t200\t503\tother\tfailed\tack p50\tack p99\t503 p50\t503 p99\tRSS\theld\t")
	run := func(rate int) (rampStep, error) {
		deliveries, _ := b.created(rate, step)
		s := rampStep{rate: rate, Tally: benchmark.Count(b.load.Run(ctx, rate, deliveries))}
		if err := ctx.Err(); err != nil {
			return s, err
		}
		var err error
		if s.rss, _, err = b.serve.Memory(); err != nil {
			return s, err
		}
		s.held = float64(s.OK) >= heldOK*float64(max(1, s.Sent+s.Saturated)) && s.Ack.Percentile(99) <= heldP99
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%v\t\n", rate, s.Sent, s.OK, s.Shed, s.Other, s.Failed+s.Saturated,
			ms(s.Ack.Percentile(50)), ms(s.Ack.Percentile(99)), ms(s.ShedLatency.Percentile(50)), ms(s.ShedLatency.Percentile(99)), mib(s.rss), s.held)
		return s, nil
	}
	var steps []rampStep
	capacity := 0
	for i, rate := range rampRates {
		if rate > maxRate {
			break
		}
		s, err := run(rate)
		if err != nil {
			return false, err
		}
		steps = append(steps, s)
		if s.held {
			capacity = rate
			continue
		}
		over := 2 * capacity
		if i+1 < len(rampRates) {
			over = max(over, rampRates[i+1])
		}
		if over <= maxRate {
			s, err := run(over)
			if err != nil {
				return false, err
			}
			steps = append(steps, s)
		}
		break
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	ok := capacity >= targetCapacity
	fmt.Fprintf(stdout, "capacity before shedding: %d/s (target ≥ %d/s) %s\n", capacity, targetCapacity, verdict(ok))
	shed, slowest := 0, time.Duration(0)
	for _, s := range steps {
		shed += s.Shed
		slowest = max(slowest, s.ShedLatency.Percentile(99))
	}
	switch {
	case len(steps) == 0 || steps[len(steps)-1].held:
		fmt.Fprintf(stdout, "past capacity: not reached up to %d/s\n", maxRate)
	case shed == 0:
		fmt.Fprintf(stdout, "past capacity: no 503 answered (target: shed with 503) %s\n", verdict(false))
		ok = false
	default:
		fast := slowest <= targetAnswer
		fmt.Fprintf(stdout, "past capacity: %d × 503, slowest step's 503 p99 %s (target: shed with 503 within %s) %s\n", shed, ms(slowest), targetAnswer, verdict(fast))
		ok = ok && fast
	}
	return ok, nil
}

// startServe starts this binary's `serve` as a child on a free loopback
// address, on the database at url, with the model at modelURL (OpenAI's
// protocol) and env's platform settings; it returns the child and where it
// listens.
func startServe(url, role, modelURL string, env ...string) (*benchmark.Process, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("find the weft binary: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("pick a port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := benchmark.Start(exe, []string{"serve"}, append([]string{
		"DATABASE_URL=" + url, "WEFT_ADDR=" + addr, "WEFT_LOG_LEVEL=error", "WEFT_ROLE=" + role, "WEFT_SHUTDOWN_TIMEOUT=5s",
		"WEFT_LLM_PROVIDER=openai", "OPENAI_API_KEY=bench", "OPENAI_BASE_URL=" + modelURL,
	}, env...))
	return p, addr, err
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
