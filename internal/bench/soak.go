package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// The soak's pass bounds (issue #17 item 7).
const (
	// soakThroughputBand: every full minute's answers within ±20% of the
	// first minute's.
	soakThroughputBand = 0.20
	// A resource has an upward trend when the least-squares line through
	// its samples (after the first minute, the warm-up) rises over the run
	// by more than the larger of soakTrendShare of its mean and an absolute
	// floor, so that noise around a small level is not called a leak.
	soakTrendShare     = 0.10
	soakRSSFloor       = 16 << 20
	soakGoroutineFloor = 50
	// soakTurnsPerConversation: each conversation is an opening and its
	// follow-ups, each sent once the previous one was answered (a person
	// waits for the reply), then a new conversation takes its place, so
	// threads stay as long as real ones however long the soak.
	soakTurnsPerConversation = 5
	// soakMaxConversations bounds conversations awaiting an answer: past
	// it the generator skips inputs (counted) instead of growing without
	// bound while weft is stalled. The probe's smaller bound still keeps
	// every turn worker busy, and its backlog drains in seconds.
	soakMaxConversations  = 5000
	probeMaxConversations = 300
	// probeDrain bounds the wait for the probe's backlog: the soak's
	// first minute is its baseline, so it must not start behind.
	probeDrain      = 10 * time.Minute
	soakSampleEvery = 10 * time.Second
	soakReply       = "The redirect drops the return URL; keep it in the state parameter."
)

// soakConv is one conversation the soak drives: a Linear session or a
// Discord thread.
type soakConv struct {
	linear   bool
	id       string // session id, or Discord thread id (the mention's id)
	opts     lineartest.SessionOpts
	sent     int
	answered int
}

// soakBench is one `weft bench soak` run: one weft serve with Linear and
// Discord on, their fakes, and the generator's bookkeeping.
type soakBench struct {
	linearIssue
	discord *discordtest.Server
	*served
	token   string
	client  *http.Client
	pool    *pgxpool.Pool
	scratch string
	channel string
	user    discordtest.User

	sends sync.WaitGroup
	slots chan struct{} // bounds Linear webhook sends in flight

	mu       sync.Mutex  // guards the two below, which sends update
	rejected int         // webhook answers other than 200
	dropped  []*soakConv // conversations whose webhook was refused

	most int // conversations awaiting an answer at most

	sessions   map[string]*soakConv // Linear, by session id
	pending    []*soakConv          // Discord conversations awaiting an answer
	idle       [2][]*soakConv       // [linear?1:0] conversations ready for a follow-up
	awaiting   int                  // conversations awaiting an answer
	activity   int                  // Linear activities already scanned
	next       int                  // inputs sent, for alternating platforms
	sent       int
	answers    int
	byPlatform [2]int // answers, [linear?1:0]
	skipped    int
	modelErrs  int // Linear error activities: answered, but not as asked
}

// soakSample is one reading of weft's resources.
type soakSample struct {
	at         time.Time
	rss        int64
	goroutines int
	conns      int
	queued     int
	errLines   int
}

// soakMinute is one printed row.
type soakMinute struct {
	sent, answers int
	last          soakSample
}

// benchSoak drives a full weft serve (Linear and Discord on, a fake model
// answering in -model-delay) at half its measured capacity for -duration,
// with conversations of an opening and follow-ups on both platforms, and
// prints throughput and weft's resources per minute, then PASS or FAIL.
func benchSoak(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench soak", flag.ContinueOnError)
	duration := fs.Duration("duration", 30*time.Minute, "how long the soak lasts (whole minutes are judged)")
	rate := fs.Int("rate", 0, "inputs per second; 0 measures capacity first and soaks at half of it")
	probe := fs.Duration("probe", 40*time.Second, "how long the capacity probe overloads weft (with -rate 0)")
	probeRate := fs.Int("probe-rate", 100, "inputs per second offered during the capacity probe")
	modelDelay := fs.Duration("model-delay", time.Second, "how long the fake model takes to answer")
	wait := fs.Duration("wait", 60*time.Second, "how long to wait, after the soak, for answers still due")
	sc := scratchFlags(fs, "weft_bench_soak")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *rate < 0 || *duration < time.Minute || *probe < 10*time.Second || *probeRate < 1 || *wait <= 0 {
		return badFlags(fs, stderr)
	}
	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := startSoakBench(ctx, url, *sc.name, *modelDelay)
	if err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "weft-bench soak: weft serve pid %d on scratch database %s; fakes: lineartest, discordtest, llmtest (model answering in %s)\n",
		b.proc.PID(), *sc.name, *modelDelay)

	soakRate := *rate
	if soakRate == 0 {
		capacity, err := b.measureCapacity(ctx, stdout, *probeRate, *probe)
		if err != nil {
			return err
		}
		soakRate = max(1, int(capacity/2))
	}
	minutes := int(*duration / time.Minute)
	fmt.Fprintf(stdout, "\nSoak at %d inputs/s for %d min (conversations of %d inputs, alternating Linear and Discord):\n", soakRate, minutes, soakTurnsPerConversation)
	errBefore := b.proc.StderrLines()
	rows, samples, err := b.soak(ctx, stdout, soakRate, minutes)
	if err != nil {
		return err
	}
	unanswered, err := b.drain(ctx, *wait)
	if err != nil {
		return err
	}
	b.sends.Wait()
	errLines := b.proc.StderrLines() - errBefore
	return b.judge(stdout, rows, samples, unanswered, errLines)
}

// startSoakBench starts the fakes and one weft serve with Linear and
// Discord on, and waits until it is ready and its gateway identified.
func startSoakBench(ctx context.Context, url, scratch string, modelDelay time.Duration) (_ *soakBench, err error) {
	const secret = "weft-bench-webhook-secret"
	b := &soakBench{linearIssue: newLinearIssue(secret),
		discord: discordtest.NewServer(nil), token: "weft-bench-soak", scratch: scratch,
		user:   discordtest.User{ID: "200000000000000001", Name: "ada"},
		client: &http.Client{Timeout: linearDeliveryTimeout},
		slots:  make(chan struct{}, 256), sessions: map[string]*soakConv{}, most: soakMaxConversations}
	defer func() {
		if err != nil {
			b.linear.Close()
			b.discord.Close()
			if b.pool != nil {
				b.pool.Close()
			}
		}
	}()
	b.channel = b.discord.AddChannel(discordBenchGuild)

	b.served, err = startServed(ctx, url, "all", false, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: soakReply, Delay: modelDelay} },
		append([]string{"WEFT_API_TOKEN=" + b.token,
			"LINEAR_WEBHOOK_SECRET=" + secret, "LINEAR_ACCESS_TOKEN=" + lineartest.AccessToken, "LINEAR_API_URL=" + b.linear.URL()},
			discordEnv(b.discord, discordBenchGuild)...)...)
	if err != nil {
		return nil, err
	}
	if err = b.awaitGateway(ctx, b.discord); err != nil {
		return nil, err
	}
	// The bench's own reader of the scratch database: one connection, left
	// out of the count of weft's.
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		_ = b.proc.Stop(5 * time.Second)
		return nil, err
	}
	pcfg.MaxConns = 1
	if b.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		_ = b.proc.Stop(5 * time.Second)
		return nil, err
	}
	return b, nil
}

func (b *soakBench) close(logger *slog.Logger) {
	b.sends.Wait()
	b.pool.Close()
	b.stop(logger)
	b.linear.Close()
	b.discord.Close()
}

// measureCapacity overloads weft at probeRate for d and returns the
// answers per second it delivered over the probe's second half, when its
// queues were full; then waits for the backlog to drain.
func (b *soakBench) measureCapacity(ctx context.Context, stdout io.Writer, probeRate int, d time.Duration) (float64, error) {
	fmt.Fprintf(stdout, "\nCapacity probe: %d inputs/s offered for %s\n", probeRate, d)
	start := time.Now()
	half := start.Add(d / 2)
	var atHalf int
	halfTaken := false
	b.most = probeMaxConversations
	err := b.drive(ctx, probeRate, d, func(now time.Time) {
		if !halfTaken && !now.Before(half) {
			atHalf, halfTaken = b.answered(), true
		}
	})
	if err != nil {
		return 0, err
	}
	capacity := float64(b.answered()-atHalf) / time.Since(half).Seconds()
	fmt.Fprintf(stdout, "capacity: %.1f answers/s over the probe's second half (%d inputs sent, %d skipped, %d webhooks not 200)\n",
		capacity, b.sent, b.skipped, b.rejected)
	if capacity >= 0.9*float64(probeRate) {
		fmt.Fprintf(stdout, "note: weft kept up with the probe: its capacity is at least this; raise -probe-rate to measure it\n")
	}
	drainStart := time.Now()
	left, err := b.drain(ctx, probeDrain)
	if err != nil {
		return 0, err
	}
	if left > 0 {
		return 0, fmt.Errorf("capacity probe: %d conversations still unanswered after %s: weft did not drain its backlog", left, probeDrain)
	}
	fmt.Fprintf(stdout, "probe backlog drained in %s\n", time.Since(drainStart).Round(time.Second))
	b.reset()
	return capacity, nil
}

// soak drives rate inputs/s for minutes whole minutes, sampling weft every
// soakSampleEvery and printing a row per minute.
func (b *soakBench) soak(ctx context.Context, stdout io.Writer, rate, minutes int) ([]soakMinute, []soakSample, error) {
	// Fixed widths, not a tabwriter: each row prints as its minute ends.
	const rowFormat = "%4v %7v %8v %10v %9v %11v %9v %13v %12v\n"
	fmt.Fprintf(stdout, rowFormat, "min", "inputs", "answers", "answers/s", "RSS", "goroutines", "DB conns", "River queued", "error lines")
	var rows []soakMinute
	var samples []soakSample
	start := time.Now()
	nextSample := start.Add(soakSampleEvery)
	minuteEnd := start.Add(time.Minute)
	var sentAt, answersAt int
	errBase := b.proc.StderrLines()
	var sampleErr error
	err := b.drive(ctx, rate, time.Duration(minutes)*time.Minute, func(now time.Time) {
		if sampleErr != nil || now.Before(nextSample) {
			return
		}
		nextSample = nextSample.Add(soakSampleEvery)
		s, err := b.sample(ctx)
		if err != nil {
			sampleErr = err
			return
		}
		s.errLines -= errBase
		samples = append(samples, s)
		if now.Before(minuteEnd) {
			return
		}
		minuteEnd = minuteEnd.Add(time.Minute)
		answers := b.answered()
		row := soakMinute{sent: b.sent - sentAt, answers: answers - answersAt, last: s}
		sentAt, answersAt = b.sent, answers
		rows = append(rows, row)
		fmt.Fprintf(stdout, rowFormat, len(rows), row.sent, row.answers, fmt.Sprintf("%.1f", float64(row.answers)/60),
			kit.MiB(s.rss), s.goroutines, s.conns, s.queued, s.errLines)
	})
	if err == nil {
		err = sampleErr
	}
	return rows, samples, err
}

// judge prints the verdict and its reasons.
func (b *soakBench) judge(stdout io.Writer, rows []soakMinute, samples []soakSample, unanswered, errLines int) error {
	var reasons []string
	if len(rows) == 0 {
		return errors.New("soak: no minute completed")
	}
	first := float64(rows[0].answers)
	for i, r := range rows[1:] {
		if first == 0 || math.Abs(float64(r.answers)-first) > soakThroughputBand*first {
			reasons = append(reasons, fmt.Sprintf("minute %d: %d answers, outside ±%.0f%% of the first minute's %d", i+2, r.answers, soakThroughputBand*100, rows[0].answers))
		}
	}
	// Trends over the samples after the first minute (warm-up).
	var steady []soakSample
	for _, s := range samples {
		if s.at.Sub(samples[0].at) >= time.Minute-soakSampleEvery {
			steady = append(steady, s)
		}
	}
	trend := func(name string, get func(soakSample) float64, floor float64, unit func(float64) string) {
		rise, mean := rising(steady, get)
		bound := max(soakTrendShare*mean, floor)
		verdictText := "flat"
		if rise > bound {
			verdictText = "UPWARD"
			reasons = append(reasons, fmt.Sprintf("%s rises by %s over the run (bound %s)", name, unit(rise), unit(bound)))
		}
		fmt.Fprintf(stdout, "%s: least-squares rise over minutes 2–%d %s (bound: %s = max(%.0f%% of mean %s, %s)): %s\n",
			name, len(rows), unit(rise), unit(bound), soakTrendShare*100, unit(mean), unit(floor), verdictText)
	}
	fmt.Fprintln(stdout)
	if len(steady) >= 2 {
		trend("RSS", func(s soakSample) float64 { return float64(s.rss) }, soakRSSFloor, func(v float64) string { return kit.MiB(int64(v)) })
		trend("goroutines", func(s soakSample) float64 { return float64(s.goroutines) }, soakGoroutineFloor, func(v float64) string { return fmt.Sprintf("%.0f", v) })
	} else {
		reasons = append(reasons, "too few samples after the first minute to judge a trend")
	}
	fmt.Fprintf(stdout, "throughput: first minute %d answers; every later minute must be within ±%.0f%%\n", rows[0].answers, soakThroughputBand*100)
	fmt.Fprintf(stdout, "error log lines of weft serve during the soak: %d\n", errLines)
	if errLines > 0 {
		reasons = append(reasons, fmt.Sprintf("%d error log lines (last of them above)", errLines))
		fmt.Fprintf(stdout, "weft serve stderr (tail):\n%s\n", lastLines(b.proc.Stderr(), 10))
	}
	fmt.Fprintf(stdout, "inputs: %d sent, %d skipped (generator at its conversation bound), %d webhooks not 200, %d Linear error activities, %d unanswered at the end\n",
		b.sent, b.skipped, b.rejected, b.modelErrs, unanswered)
	fmt.Fprintf(stdout, "answers: %d on Linear, %d on Discord\n", b.byPlatform[1], b.byPlatform[0])
	if unanswered > 0 {
		reasons = append(reasons, fmt.Sprintf("%d conversations unanswered after the soak", unanswered))
	}
	if b.skipped > 0 || b.rejected > 0 {
		reasons = append(reasons, fmt.Sprintf("%d inputs skipped and %d webhooks refused: half capacity was not held", b.skipped, b.rejected))
	}
	if len(reasons) == 0 {
		fmt.Fprintln(stdout, "\nsoak: PASS")
		return nil
	}
	fmt.Fprintln(stdout, "\nsoak: FAIL")
	for _, r := range reasons {
		fmt.Fprintln(stdout, "  - "+r)
	}
	return errSoakFailed
}

// errSoakFailed makes a failed soak exit non-zero, for a run nobody
// watches; the reasons are printed above it.
var errSoakFailed = errors.New("soak failed")

// rising fits a least-squares line to get over samples against time and
// returns how much it rises from the first sample to the last, and the
// mean.
func rising(samples []soakSample, get func(soakSample) float64) (rise, mean float64) {
	n := float64(len(samples))
	var sx, sy, sxx, sxy float64
	t0 := samples[0].at
	for _, s := range samples {
		x, y := s.at.Sub(t0).Seconds(), get(s)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	mean = sy / n
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, mean
	}
	slope := (n*sxy - sx*sy) / den
	return slope * samples[len(samples)-1].at.Sub(t0).Seconds(), mean
}

// drive sends rate inputs a second for d, polling the fakes for answers
// between sends and calling tick after each poll.
func (b *soakBench) drive(ctx context.Context, rate int, d time.Duration, tick func(time.Time)) error {
	start := time.Now()
	n := int(d.Seconds() * float64(rate))
	nextPoll := start
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if i >= n {
			at = start.Add(d)
		}
		for now := time.Now(); now.Before(at); now = time.Now() {
			if !now.Before(nextPoll) {
				b.poll()
				tick(now)
				nextPoll = now.Add(250 * time.Millisecond)
			}
			if err := retry.Sleep(ctx, min(time.Until(at), time.Until(nextPoll))); err != nil {
				return err
			}
		}
		if i >= n {
			b.poll()
			tick(time.Now())
			return nil
		}
		b.input(ctx)
	}
}

// input sends one input on the next platform: a follow-up in a
// conversation whose last input was answered, else an opening.
func (b *soakBench) input(ctx context.Context) {
	isLinear := b.next%2 == 0
	b.next++
	k := 0
	if isLinear {
		k = 1
	}
	var c *soakConv
	if q := b.idle[k]; len(q) > 0 {
		c, b.idle[k] = q[0], q[1:]
	} else if b.awaiting >= b.most {
		b.skipped++
		return
	} else {
		c = &soakConv{linear: isLinear}
	}
	c.sent++
	b.sent++
	b.awaiting++
	if !isLinear {
		if c.sent == 1 {
			m := b.discord.PostUserMessage(b.channel, b.user, fmt.Sprintf("<@%s> why does the login redirect lose the return URL?", b.discord.BotUser().ID))
			c.id = m.ID // a thread started from a message has its id
		} else {
			b.discord.PostUserMessage(c.id, b.user, "and what about the logout redirect?")
		}
		b.pending = append(b.pending, c)
		return
	}
	var dl lineartest.Delivery
	if c.sent == 1 {
		dl, c.opts = b.created(time.Now())
		c.id = c.opts.SessionID
		b.sessions[c.id] = c
	} else {
		c.opts.Timestamp = time.Now()
		dl = b.signer.Prompted(c.opts, uuid.NewString(), "and what about the logout redirect?")
	}
	b.slots <- struct{}{}
	b.sends.Add(1)
	go func() {
		defer func() { <-b.slots; b.sends.Done() }()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+b.addr+"/webhooks/linear", strings.NewReader(string(dl.Body)))
		if err != nil {
			b.reject(c)
			return
		}
		req.Header = dl.Header.Clone()
		resp, err := b.client.Do(req)
		if err != nil {
			b.reject(c)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.reject(c)
		}
	}()
}

// reject counts a refused webhook; the next poll drops its conversation,
// which will never be answered.
func (b *soakBench) reject(c *soakConv) {
	b.mu.Lock()
	b.rejected++
	b.dropped = append(b.dropped, c)
	b.mu.Unlock()
}

// poll reads the fakes for new answers: Linear response (or error)
// activities, and weft's replies in the Discord threads awaiting one.
func (b *soakBench) poll() {
	b.mu.Lock()
	dropped := b.dropped
	b.dropped = nil
	b.mu.Unlock()
	for _, c := range dropped {
		if b.sessions[c.id] == c && c.answered < c.sent {
			delete(b.sessions, c.id)
			b.awaiting--
		}
	}
	acts := b.linear.AllActivities()
	for _, a := range acts[b.activity:] {
		c := b.sessions[a.SessionID]
		if c == nil || (a.Type != "response" && a.Type != "error") {
			continue
		}
		if a.Type == "error" {
			b.modelErrs++
		}
		b.answer(c, c.answered+1)
	}
	b.activity = len(acts)
	keep := b.pending[:0]
	for _, c := range b.pending {
		n := 0
		for _, m := range b.discord.Sent(c.id) {
			if m.Content == soakReply {
				n++
			}
		}
		b.answer(c, n)
		if c.answered < c.sent {
			keep = append(keep, c)
		}
	}
	b.pending = keep
}

// answer records that c has n answers, freeing it for its next input or
// retiring it after its last.
func (b *soakBench) answer(c *soakConv, n int) {
	prev := c.answered
	if n <= prev || prev >= c.sent {
		return
	}
	c.answered = min(n, c.sent)
	b.answers += c.answered - prev
	if c.linear {
		b.byPlatform[1] += c.answered - prev
	} else {
		b.byPlatform[0] += c.answered - prev
	}
	if c.answered < c.sent {
		return
	}
	b.awaiting--
	switch {
	case c.sent >= soakTurnsPerConversation:
		if c.linear {
			delete(b.sessions, c.id)
		}
	case c.linear:
		b.idle[1] = append(b.idle[1], c)
	default:
		b.idle[0] = append(b.idle[0], c)
	}
}

func (b *soakBench) answered() int { return b.answers }

// drain waits up to wait for every conversation awaiting an answer to get
// it, and returns how many did not.
func (b *soakBench) drain(ctx context.Context, wait time.Duration) (int, error) {
	b.sends.Wait()
	for deadline := time.Now().Add(wait); ; {
		b.poll()
		if time.Now().After(deadline) {
			return b.awaiting, nil
		}
		if b.awaiting == 0 {
			// Answered; and nothing left queued (retries, sends) to spill
			// into what follows.
			var queued int
			err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable', 'running')`).Scan(&queued)
			if err != nil || queued == 0 {
				return 0, err
			}
		}
		if err := retry.Sleep(ctx, 250*time.Millisecond); err != nil {
			return b.awaiting, err
		}
	}
}

// reset forgets the probe's conversations and counts before the soak.
func (b *soakBench) reset() {
	b.poll()
	b.sessions, b.pending, b.idle = map[string]*soakConv{}, nil, [2][]*soakConv{}
	b.awaiting, b.sent, b.answers, b.skipped, b.modelErrs, b.next, b.byPlatform = 0, 0, 0, 0, 0, 0, [2]int{}
	b.most = soakMaxConversations
	b.mu.Lock()
	b.rejected, b.dropped = 0, nil
	b.mu.Unlock()
}

// sample reads weft serve's RSS (from /proc), goroutines (its /metrics),
// connections to the scratch database and River's queued jobs.
func (b *soakBench) sample(ctx context.Context) (soakSample, error) {
	s := soakSample{at: time.Now(), errLines: b.proc.StderrLines()}
	var err error
	if s.rss, _, err = b.proc.Memory(); err != nil {
		return s, err
	}
	if s.goroutines, err = b.goroutines(ctx); err != nil {
		return s, err
	}
	err = b.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()),
		(SELECT count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable'))`, b.scratch).Scan(&s.conns, &s.queued)
	if err != nil {
		return s, fmt.Errorf("sample the database: %w", err)
	}
	return s, nil
}

// goroutines reads go_goroutines from weft's /metrics.
func (b *soakBench) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read /metrics: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("read /metrics (status %d): no go_goroutines", resp.StatusCode)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
