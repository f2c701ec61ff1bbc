package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// Targets from docs/architecture.md ("Numbers we hold ourselves to").
const (
	targetAckP99          = 25 * time.Millisecond
	targetCapacity        = 1000
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
	linearIssue
	weft   *target
	served *served
	// debugAddr is weft serve's WEFT_DEBUG_ADDR, "" when unset.
	debugAddr string
}

// profile takes a CPU profile of weft serve for d from its pprof
// endpoint into path, from now, and sends on the channel returned when it
// is written (at once when path is "").
func (b *linearBench) profile(ctx context.Context, path string, d time.Duration) <-chan error {
	done := make(chan error, 1)
	if path == "" {
		done <- nil
		return done
	}
	go func() {
		done <- kit.FetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", b.debugAddr, max(1, int(d.Seconds()))), path)
	}()
	return done
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
	sc := scratchFlags(fs, "weft_bench_linear")
	overload := fs.Int("overload", 5, "after the ramp, drive weft at 2×, 3×, … up to this multiple of its capacity, every answer due within 1 s; 0 skips")
	anchor := fs.Bool("anchor", true, "measure the anchor first: a minimal signed-webhook handler (read, HMAC, one insert, one commit) on the same database")
	serveProfile := fs.String("serve-cpuprofile", "", "write a CPU profile of the weft serve child during the steady run to this file (taken from its WEFT_DEBUG_ADDR)")
	anchorServe := fs.String("anchor-serve", "", "serve the anchor on this address (how the bench starts it as its child)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *anchorServe != "" {
		return serveAnchor(ctx, cfg.DatabaseURL, *anchorServe, []byte(cfg.Linear.WebhookSecret))
	}
	if *rate < 1 || *duration <= 0 || *step <= 0 || *maxRate < 0 || *overload < 0 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	b := newLinearBench()
	defer b.linear.Close()
	fmt.Fprintf(stdout, "weft-bench linear on scratch database %s; load average at start %s\n", *sc.name, kit.LoadAvg())
	var ref *anchorFigures
	if *anchor {
		if ref, err = b.measureAnchor(ctx, url, stdout, *rate, *warmup, *duration, *step, *maxRate); err != nil {
			return err
		}
	}
	if err := b.startWeft(ctx, url, *role, *modelDelay, *serveProfile != ""); err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "\nweft serve pid %d; fakes: lineartest (Linear), llmtest (model answering in %s)\n", b.weft.proc.PID(), *modelDelay)

	pass := true
	b.warm(ctx, stdout, b.weft, *rate, *warmup)
	// Steady rate: ack latency, then first activities.
	deliveries, sessions := b.deliveries(*rate, *duration)
	profiled := b.profile(ctx, *serveProfile, *duration)
	before, _ := b.weft.cpu()
	results := b.weft.load.Run(ctx, *rate, deliveries)
	after, _ := b.weft.cpu()
	if err := <-profiled; err != nil {
		return err
	}
	steady := kit.Count(results)
	ackP99 := steady.Ack.Percentile(99)
	ackOK := ackP99 <= targetAckP99 && steady.OK == len(results)
	pass = pass && ackOK
	fmt.Fprintf(stdout, "Steady %d/s for %s: %d sent, %d × 200, %d × 503, %d other, %d failed\n", *rate, *duration, steady.Sent, steady.OK, steady.Shed, steady.Other, steady.Failed+steady.Saturated)
	fmt.Fprintf(stdout, "weft serve meanwhile: %s; load average %s; the generator's send lag p50 %s, p99 %s\n", after.Since(before, *duration), kit.LoadAvg(),
		kit.Ms(steady.Lag.Percentile(50)), kit.Ms(steady.Lag.Percentile(99)))
	tw := kit.NewTable(stdout, 50, 99, 99.9, 100)
	tw.Row("ack latency (200s)", steady.Ack, fmt.Sprintf("p99 ≤ %s, all 200 %s", targetAckP99, kit.Verdict(ackOK)))

	first, missing, err := b.firstActivities(ctx, results, sessions, *wait)
	if err != nil {
		return err
	}
	faP99 := first.Percentile(99)
	faOK := faP99 <= targetFirstActivity && missing == 0
	pass = pass && faOK
	tw.Row("webhook sent → first activity at fake", first, fmt.Sprintf("p99 ≤ %s %s", targetFirstActivity, kit.Verdict(faOK)))
	if err := tw.Flush(); err != nil {
		return err
	}
	if missing > 0 {
		fmt.Fprintf(stdout, "note: %d sessions had no activity within %s\n", missing, *wait)
	}

	capacity, relKnee := -1, -1
	if *maxRate > 0 {
		var ok bool
		var refP99 map[int]time.Duration
		if ref != nil {
			refP99 = ref.p99s
		}
		capacity, relKnee, ok, _, err = b.ramp(ctx, stdout, b.weft, *step, *maxRate, refP99)
		if err != nil {
			return err
		}
		pass = pass && ok
		if *overload > 1 {
			ok, err := b.overload(ctx, stdout, *step, capacity, *overload)
			if err != nil {
				return err
			}
			pass = pass && ok
		}
	}

	ok, err := b.served.peakRSS(stdout)
	if err != nil {
		return err
	}
	pass = pass && ok
	if ref != nil {
		pass = ref.compare(stdout, *rate, steady.Ack, capacity, relKnee) && pass
	}
	fmt.Fprintf(stdout, "load average at the end: %s\n", kit.LoadAvg())
	fmt.Fprintf(stdout, "\noverall: %s\n", kit.Verdict(pass))
	return nil
}

// warm raises the load on t to rate over d, unmeasured, in four steps (a
// quarter of the rate, a half, three quarters, all of it): connections,
// caches and queues reach their steady state, as under a real day's load
// rather than a cold start.
func (b *linearBench) warm(ctx context.Context, stdout io.Writer, t *target, rate int, d time.Duration) {
	if d <= 0 {
		return
	}
	var ok, shed int
	for q := 1; q <= 4; q++ {
		r := max(1, rate*q/4)
		deliveries, _ := b.deliveries(r, d/4)
		warm := kit.Count(t.load.Run(ctx, r, deliveries))
		ok, shed = ok+warm.OK, shed+warm.Shed
	}
	fmt.Fprintf(stdout, "Warm-up rising to %d/s over %s (not measured): %d × 200, %d × 503\n", rate, d, ok, shed)
}

// newLinearBench starts the fakes of Linear's API, with the issue every
// session is on.
func newLinearBench() *linearBench {
	return &linearBench{linearIssue: newLinearIssue(linearBenchSecret)}
}

const linearBenchSecret = "weft-bench-webhook-secret"

// startWeft starts the model's fake and weft serve on the database at url.
// With debug set, weft serve serves its pprof profiles (WEFT_DEBUG_ADDR)
// for profile.
func (b *linearBench) startWeft(ctx context.Context, url, role string, modelDelay time.Duration, debug bool) error {
	env := []string{"LINEAR_WEBHOOK_SECRET=" + linearBenchSecret, "LINEAR_ACCESS_TOKEN=" + lineartest.AccessToken, "LINEAR_API_URL=" + b.linear.URL()}
	if debug {
		addr, err := kit.FreeAddr()
		if err != nil {
			return err
		}
		b.debugAddr = addr
		env = append(env, "WEFT_DEBUG_ADDR="+addr)
	}
	s, err := startServed(ctx, url, role, false, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "The redirect drops the return URL; keep it in the state parameter.", Delay: modelDelay}
	}, env...)
	if err != nil {
		return err
	}
	b.served = s
	b.weft = &target{name: "weft", proc: s.proc, load: kit.NewLoad("http://"+s.addr+"/webhooks/linear", linearDeliveryTimeout, maxInFlight)}
	return nil
}

func (b *linearBench) close(logger *slog.Logger) {
	if err := b.weft.stop(); err != nil {
		logger.Warn("stop weft serve", slog.Any("error", err), slog.String("stderr", b.weft.proc.Stderr()))
	}
}

// created builds and signs a run's deliveries, rate a second for d, before
// the run starts: mentions opening new sessions on the fake's issue, each
// registered with the fake. It returns the deliveries and their session
// ids. Linear stamps a delivery when it sends it, so each is stamped with
// its place in the schedule as if the run started now: it goes out that
// fresh, but for the time the building took, however long the run.
func (b *linearBench) deliveries(rate int, d time.Duration) ([]kit.Delivery, []string) {
	n := int(d.Seconds() * float64(rate))
	deliveries, sessions := make([]kit.Delivery, n), make([]string, n)
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		dl, o := b.created(at)
		deliveries[i], sessions[i] = kit.Delivery{Body: dl.Body, Header: dl.Header}, o.SessionID
	}
	return deliveries, sessions
}

// firstActivities waits up to wait for each acknowledged session's first
// activity and returns, per session, the time from the delivery's send to
// the fake's receipt of it, and how many never came.
func (b *linearBench) firstActivities(ctx context.Context, results []kit.Result, sessions []string, wait time.Duration) (kit.Latencies, int, error) {
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
			var out kit.Latencies
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
	kit.Tally
	rss  int64
	held bool
	// relHeld: held by the relative rule (see ramp).
	relHeld bool
}

// ramp raises the rate on t step by step until it no longer holds it (see
// heldOK), then runs once more further out (twice the last rate held, or
// the next step if that is higher) to see it shed with 503s and its memory
// stay bounded. It prints a row per step and returns the capacity (the
// last rate held) and whether the capacity and shedding targets were met.
//
// With ref (the anchor's ack p99 by rate, measured in the same run), a step
// also holds relatively when its 200s are as many and its ack p99 within
// relativeHold × the anchor's at the same rate: the ramp goes on while
// either rule holds, and the knee by the relative rule comes back too
// (-1 without ref). The absolute rule alone sets the capacity.
func (b *linearBench) ramp(ctx context.Context, stdout io.Writer, t *target, step time.Duration, maxRate int, ref map[int]time.Duration) (int, int, bool, map[int]time.Duration, error) {
	fmt.Fprintf(stdout, "\nCapacity ramp of %s, %s per step (a step holds with ≥ %.1f%% 200s and ack p99 ≤ %s", t.name, step, heldOK*100, heldP99)
	if ref != nil {
		fmt.Fprintf(stdout, "; relatively with ≥ %.1f%% 200s and ack p99 ≤ %d× the anchor's at the same rate", heldOK*100, relativeHold)
	}
	fmt.Fprintln(stdout, "):")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "rate/s\tsent\t200\t503\tother\tfailed\tack p50\tack p99\t503 p50\t503 p99\tsend lag p99\tRSS\theld\t")
	if ref != nil {
		fmt.Fprint(tw, "anchor p99\theld relatively\t")
	}
	fmt.Fprintln(tw)
	p99s := map[int]time.Duration{}
	run := func(rate int) (rampStep, error) {
		deliveries, _ := b.deliveries(rate, step)
		s := rampStep{rate: rate, Tally: kit.Count(t.load.Run(ctx, rate, deliveries))}
		if err := ctx.Err(); err != nil {
			return s, err
		}
		var err error
		if s.rss, _, err = t.proc.Memory(); err != nil {
			return s, err
		}
		enough := float64(s.OK) >= heldOK*float64(max(1, s.Sent+s.Saturated))
		s.held = enough && s.Ack.Percentile(99) <= heldP99
		p99s[rate] = s.Ack.Percentile(99)
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t", rate, s.Sent, s.OK, s.Shed, s.Other, s.Failed+s.Saturated,
			kit.Ms(s.Ack.Percentile(50)), kit.Ms(s.Ack.Percentile(99)), kit.Ms(s.ShedLatency.Percentile(50)), kit.Ms(s.ShedLatency.Percentile(99)), kit.Ms(s.Lag.Percentile(99)), kit.MiB(s.rss), s.held)
		if ref != nil {
			a, ok := ref[rate]
			s.relHeld = ok && enough && s.OK > 0 && s.Ack.Percentile(99) <= relativeHold*a
			fmt.Fprintf(tw, "%s\t%v\t", kit.Ms(a), s.relHeld)
		}
		fmt.Fprintln(tw)
		return s, nil
	}
	var steps []rampStep
	capacity, relKnee := 0, -1
	if ref != nil {
		relKnee = 0
	}
	absDone, relDone := false, ref == nil
	for i, rate := range rampRates {
		if rate > maxRate {
			break
		}
		s, err := run(rate)
		if err != nil {
			return 0, 0, false, nil, err
		}
		steps = append(steps, s)
		if s.held && !absDone {
			capacity = rate
		} else {
			absDone = true
		}
		if s.relHeld && !relDone {
			relKnee = rate
		} else {
			relDone = true
		}
		if !absDone || !relDone {
			continue
		}
		over := 2 * max(capacity, relKnee)
		if i+1 < len(rampRates) {
			over = max(over, rampRates[i+1])
		}
		if over <= maxRate {
			s, err := run(over)
			if err != nil {
				return 0, 0, false, nil, err
			}
			steps = append(steps, s)
		}
		break
	}
	if err := tw.Flush(); err != nil {
		return 0, 0, false, nil, err
	}
	ok := capacity >= targetCapacity
	fmt.Fprintf(stdout, "%s capacity before shedding: %d/s (target ≥ %d/s) %s\n", t.name, capacity, targetCapacity, kit.Verdict(ok))
	shed, slowest := 0, time.Duration(0)
	for _, s := range steps {
		shed += s.Shed
		slowest = max(slowest, s.ShedLatency.Percentile(99))
	}
	switch {
	case len(steps) == 0 || steps[len(steps)-1].held:
		fmt.Fprintf(stdout, "past capacity: not reached up to %d/s\n", maxRate)
	case shed == 0:
		fmt.Fprintf(stdout, "past capacity: no 503 answered (target: shed with 503) %s\n", kit.Verdict(false))
		ok = false
	default:
		fast := slowest <= targetAnswer
		fmt.Fprintf(stdout, "past capacity: %d × 503, slowest step's 503 p99 %s (target: shed with 503 within %s) %s\n", shed, kit.Ms(slowest), targetAnswer, kit.Verdict(fast))
		ok = ok && fast
	}
	return capacity, relKnee, ok, p99s, nil
}

// relativeHold is the relative rule's bound: a ramp step holds relatively
// while weft's ack p99 is within this multiple of the anchor's at the same
// rate, measured in the same run, so that a slow machine, which slows the
// anchor too, does not read as no capacity at all.
const relativeHold = 10

// overloadAnswer is G2's bound: past capacity every delivery is answered,
// 200 or 503, within this, as the client measures it.
const overloadAnswer = time.Second

// overload drives weft at 2×, 3×, … up to times its capacity (its first
// ramp step's rate if it held none), a step each, and counts the answers
// the client had within overloadAnswer, those later, and the requests
// that had none within the client's timeout (Linear's 5 s) as their own
// column. It reports whether every request was answered in time and
// weft's memory stayed bounded.
func (b *linearBench) overload(ctx context.Context, stdout io.Writer, step time.Duration, capacity, times int) (bool, error) {
	base := max(capacity, rampRates[0])
	fmt.Fprintf(stdout, "\nOverload up to %d× capacity (%d/s), %s per step (target: every request answered, 200 or 503, within %s; RSS ≤ %s):\n",
		times, base, step, overloadAnswer, kit.MiB(targetRSS))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate/s\t×\tsent\t200\t503\tother\tanswered ≤ 1 s\tlater\ttimed out\tfailed\tunsent\tanswer p99\tRSS\t")
	ok := true
	for k := 2; k <= times; k++ {
		rate := k * base
		deliveries, _ := b.deliveries(rate, step)
		results := b.weft.load.Run(ctx, rate, deliveries)
		if err := ctx.Err(); err != nil {
			return false, err
		}
		c := kit.Count(results)
		var inTime, later, timedOut, failed int
		var answers kit.Latencies
		for _, r := range results {
			switch {
			case errors.Is(r.Err, kit.ErrSaturated):
			case kit.IsTimeout(r.Err):
				timedOut++
			case r.Err != nil:
				failed++
			case r.Latency <= overloadAnswer:
				inTime++
				answers = append(answers, r.Latency)
			default:
				later++
				answers = append(answers, r.Latency)
			}
		}
		rss, _, err := b.weft.proc.Memory()
		if err != nil {
			return false, err
		}
		ok = ok && inTime == len(results) && rss <= targetRSS
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%d\t%d\t%d\t%d\t%s\t%s\t\n", rate, k, c.Sent, c.OK, c.Shed, c.Other,
			100*float64(inTime)/float64(max(1, len(results))), later, timedOut, failed, c.Saturated, kit.Ms(answers.Sorted().Percentile(99)), kit.MiB(rss))
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "overload answered: %s\n", kit.Verdict(ok))
	return ok, nil
}

// anchorFigures is what the anchor measured.
type anchorFigures struct {
	ackP99 time.Duration
	acked  int // 200s of its steady run
	knee   int
	// p99s is its ramp's ack p99 by rate.
	p99s map[int]time.Duration
}

// measureAnchor runs the anchor through the same warm-up, steady run and
// ramp as weft, and stops it.
func (b *linearBench) measureAnchor(ctx context.Context, url string, stdout io.Writer, rate int, warmup, duration, step time.Duration, maxRate int) (*anchorFigures, error) {
	t, err := startAnchor(ctx, url, []byte(linearBenchSecret))
	if err != nil {
		return nil, err
	}
	defer func() { _ = t.stop() }()
	fmt.Fprintf(stdout, "\nAnchor: a minimal signed-webhook handler (read body, verify HMAC, one insert, one commit, 200), pid %d, same database\n", t.proc.PID())
	b.warm(ctx, stdout, t, rate, warmup)
	deliveries, _ := b.deliveries(rate, duration)
	before, _ := t.cpu()
	steady := kit.Count(t.load.Run(ctx, rate, deliveries))
	after, _ := t.cpu()
	f := &anchorFigures{ackP99: steady.Ack.Percentile(99), acked: steady.OK}
	fmt.Fprintf(stdout, "Anchor steady %d/s for %s: %d sent, %d × 200, %d other, %d failed; ack p50 %s, p99 %s\n", rate, duration, steady.Sent, steady.OK,
		steady.Shed+steady.Other, steady.Failed+steady.Saturated, kit.Ms(steady.Ack.Percentile(50)), kit.Ms(f.ackP99))
	fmt.Fprintf(stdout, "anchor meanwhile: %s; load average %s; the generator's send lag p50 %s, p99 %s\n", after.Since(before, duration), kit.LoadAvg(),
		kit.Ms(steady.Lag.Percentile(50)), kit.Ms(steady.Lag.Percentile(99)))
	if maxRate > 0 {
		if f.knee, _, _, f.p99s, err = b.ramp(ctx, stdout, t, step, maxRate, nil); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// compare prints weft's figures as multiples of the anchor's and reports
// whether they meet their targets. capacity < 0: no ramp was run.
func (f *anchorFigures) compare(stdout io.Writer, rate int, ack kit.Latencies, capacity, relKnee int) bool {
	ackP99 := ack.Percentile(99)
	ratio := float64(ackP99) / float64(max(f.ackP99, time.Microsecond))
	// No 200s, or none for the anchor, is no ratio at all.
	ok := len(ack) > 0 && f.acked > 0 && ratio <= targetAnchorAckRatio
	fmt.Fprintf(stdout, "\nagainst the anchor: ack p99 at %d/s %s (%d × 200) vs %s (%d × 200), %.1f× (target ≤ %d×) %s\n", rate, kit.Ms(ackP99), len(ack),
		kit.Ms(f.ackP99), f.acked, ratio, targetAnchorAckRatio, kit.Verdict(ok))
	if capacity >= 0 && f.knee > 0 {
		share := float64(capacity) / float64(f.knee)
		fmt.Fprintf(stdout, "against the anchor: capacity %d/s vs its knee %d/s, %.2f (target ≥ %.1f) %s\n", capacity, f.knee, share, targetAnchorCapacityShare, kit.Verdict(share >= targetAnchorCapacityShare))
		ok = ok && share >= targetAnchorCapacityShare
	}
	switch {
	case relKnee >= 0 && f.knee > 0:
		share := float64(relKnee) / float64(f.knee)
		fmt.Fprintf(stdout, "against the anchor: knee by the relative rule (ack p99 ≤ %d× the anchor's at the same rate) %d/s vs its knee %d/s, %.2f (target ≥ %.1f) %s\n",
			relativeHold, relKnee, f.knee, share, targetAnchorCapacityShare, kit.Verdict(share >= targetAnchorCapacityShare))
	case relKnee >= 0:
		fmt.Fprintf(stdout, "against the anchor: knee by the relative rule (ack p99 ≤ %d× the anchor's at the same rate) %d/s; the anchor itself held no step (p99 ≤ %s): the machine is too busy for an absolute knee\n",
			relativeHold, relKnee, heldP99)
	}
	return ok
}
