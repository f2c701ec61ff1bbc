package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/dbbench"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
)

// Targets from docs/architecture.md ("Numbers we hold ourselves to").
const (
	// A turn is a River job, so River's no-op jobs are its ceiling
	// (issue 18 retired the bare SKIP LOCKED loop as the anchor).
	targetTurnRatio    = 0.33
	targetPickupP50    = 5 * time.Millisecond
	targetPickupP99    = 50 * time.Millisecond
	targetStepOverhead = 50 * time.Millisecond
	// Webhooks unaffected by turns in flight: the intake write's p99 stays
	// within this multiple of its p99 with the processor idle.
	targetIntakeSlowdown = 2.0
)

// turnsBench is one `weft bench turns` run's wiring: weft as serve builds
// it (app.New) on the scratch database, the fake model (a child process)
// behind the real OpenAI adapter, and the clock on both.
type turnsBench struct {
	cfg    *app.Config
	logger *slog.Logger
	// url is the scratch database's, modelURL the fake model's.
	url, modelURL string
	// weft is the App of the current run, built by start with the run's
	// turn workers, and clock the clock on its turns and model calls.
	weft  *app.App
	clock *kit.TurnClock
	// trips counts what weft's work pool sends the server.
	trips *dbbench.Trips
	// starter starts threads as serve's intake would, on a pool of its
	// own whose traffic startCount counts, so that the work pool carries
	// only the processor's, as in serve.
	starter    *ingest.Ingester
	startCount *dbbench.Trips
	// startTrips and turnTrips are what the last burn-down sent: its
	// threads' starts (each with its turn's job), then its turns (River's
	// fetches and completions included).
	startTrips, turnTrips dbbench.TripCount
	// turnNames is the last burn-down's statements per turn, by name.
	turnNames string
	// turnCPU is what the last burn-down's turns (not their enqueueing)
	// cost in CPU.
	turnCPU kit.CPU
	// model is the fake model's child process.
	model *kit.Process
	// delay is how long the fake model takes to answer the threads
	// nextKey names from now on.
	delay time.Duration
	// burnProfile, when set, is where the 4-worker burn-down's turns are
	// profiled.
	burnProfile string
	// seq numbers the threads, whose goals (and so first user messages)
	// must be unique for the clock to match model calls to turns.
	seq int
}

// benchTurns measures the processor on an instant fake model: turns/s
// beside River's no-op jobs, pickup latency, and the backend's time
// per agent step. It works in a scratch database on the configured server,
// dropped afterwards.
func benchTurns(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench turns", flag.ContinueOnError)
	turns := fs.Int("turns", 2000, "queued turns each throughput run burns down")
	duration := fs.Duration("duration", 5*time.Second, "how long the paced pickup run and each queue baseline run last")
	rate := fs.Int("rate", 50, "turns per second enqueued, one at a time, in the paced pickup run")
	steps := fs.Int("steps", 2, "model calls per turn: a read_memory tool round before each but the last, which answers")
	inFlight := fs.Int("in-flight", 1000, "turns started at once in the concurrency run, one turn worker each (0 skips the run)")
	slowModel := fs.Duration("slow-model", 5*time.Second, "how long each model call takes in the concurrency run")
	probeRate := fs.Int("probe-rate", 20, "intake writes per second timed before and during the concurrency run")
	sc := scratchFlags(fs, "weft_bench_turns")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process (the processor and the bench) during the concurrency run to this file")
	burnProfile := fs.String("burn-cpuprofile", "", "write a CPU profile of this process (the processor and the bench) while the 4-worker burn-down works its turns to this file")
	modelServe := fs.String("model-serve", "", "serve the fake model on this address, answering in -steps calls (how the bench starts it as its child)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *modelServe != "" {
		return serveModel(ctx, *modelServe, *steps)
	}
	if *turns < 1 || *rate < 1 || *steps < 1 || *duration <= 0 || *inFlight < 0 || *slowModel < 0 || *probeRate < 1 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	b := &turnsBench{cfg: cfg, logger: logger, url: url, trips: &dbbench.Trips{}, startCount: &dbbench.Trips{}, burnProfile: *burnProfile}
	if b.modelURL, err = b.startModel(ctx, *steps); err != nil {
		return err
	}
	defer func() {
		if err := b.model.Stop(5 * time.Second); err != nil {
			logger.Warn("stop the fake model", slog.Any("error", err))
		}
	}()
	stop, err := b.openStarter(ctx)
	if err != nil {
		return err
	}
	defer stop()

	fmt.Fprintf(stdout, "weft-bench turns: scratch database %s; model: llmtest (child process %d, instant) through the OpenAI adapter; %d model call(s) per turn\n\n", *sc.name, b.model.PID(), *steps)

	burns, pass, err := b.throughput(ctx, stdout, *turns, *steps)
	if err != nil {
		return err
	}
	ok, err := b.latencies(ctx, stdout, *rate, *duration, burns)
	if err != nil {
		return err
	}
	pass = pass && ok
	if *inFlight > 0 {
		ok, err := b.concurrency(ctx, stdout, *inFlight, *slowModel, *probeRate, *cpuProfile)
		if err != nil {
			return fmt.Errorf("concurrency run: %w", err)
		}
		pass = pass && ok
	}
	fmt.Fprintf(stdout, "\noverall: %s\n", kit.Verdict(pass))
	return nil
}

// concurrency starts n turns at once on one processor with n turn
// workers, every model call taking delay, as a replica with that many
// turns waiting on a slow model; and it times intake writes (a thread and
// its turn, what a webhook's ack waits on) on an intake pool of serve's
// size, at rate a second, first with the processor idle (the anchor) and
// then while the n turns are in flight. The n turns are started by
// enqueuers on a pool of their own, as serve's intake would have started
// them: the work pool carries only the processor's traffic, as in serve,
// and the intake pool only the timed writes. With profile set, it writes a
// CPU profile of the in-flight part there.
func (b *turnsBench) concurrency(ctx context.Context, stdout io.Writer, n int, delay time.Duration, rate int, profile string) (bool, error) {
	b.delay = delay
	defer func() { b.delay = 0 }()
	if err := b.start(ctx, n); err != nil {
		return false, err
	}
	defer b.stop()
	pool := b.weft.Store().Pool()
	var idle, busy kit.Latencies
	var all []kit.Turn
	before := pool.Stat()
	var trips dbbench.TripCount
	stopProfile := func() error { return nil }
	defer func() { _ = stopProfile() }()
	window := min(delay, 5*time.Second)
	r, err := b.work(ctx, func(ctx context.Context) ([]kit.Turn, error) {
		if err := retry.Sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
		var err error
		var before []kit.Turn
		if before, idle, err = b.probe(ctx, rate, window); err != nil {
			return nil, err
		}
		if err := kit.ResetSelfPeak(); err != nil {
			return nil, err
		}
		if err := b.model.ResetPeak(); err != nil {
			return nil, err
		}
		trips = b.trips.Count()
		if profile != "" {
			if stopProfile, err = startCPUProfile(profile); err != nil {
				return nil, err
			}
		}
		keys := b.keys(n)
		var turns []kit.Turn
		var startErr error
		var wg sync.WaitGroup
		wg.Go(func() { turns, startErr = b.enqueueAll(ctx, keys, enqueuers) })
		during, lat, err := b.probe(ctx, rate, window)
		wg.Wait()
		if err := errors.Join(startErr, err); err != nil {
			return nil, err
		}
		busy = lat
		all = append(append(append(all, before...), turns...), during...)
		return all, nil
	})
	if err != nil {
		return false, err
	}
	trips = b.trips.Count().Sub(trips)
	if err := stopProfile(); err != nil {
		return false, err
	}
	_, peak, err := kit.SelfMemory()
	if err != nil {
		return false, err
	}
	_, modelPeak, err := b.model.Memory()
	if err != nil {
		return false, err
	}
	after := pool.Stat()
	fmt.Fprintf(stdout, "\nConcurrency: %d turns started at once (by %d enqueuers on a pool of their own), %d turn workers, each model call %s; intake writes at %d/s on a %d-connection intake pool, %s idle (anchor) then %s while the turns are in flight:\n",
		n, enqueuers, n, delay, rate, b.cfg.IntakeDBConns, window, window)
	tw := kit.NewTable(stdout, 50, 99, 100)
	pass := true
	row := func(name string, l kit.Latencies, target string, ok bool) {
		tw.Row(name, l, target)
		pass = pass && ok
	}
	ok := r.StepOverhead.Percentile(99) <= targetStepOverhead
	row("backend overhead per step", r.StepOverhead, fmt.Sprintf("p99 ≤ %s %s", targetStepOverhead, kit.Verdict(ok)), ok)
	row("model call (fake, excluded above)", r.LLM, "", true)
	row("intake write, processor idle (anchor)", idle, "", true)
	ratio := float64(busy.Percentile(99)) / float64(max(idle.Percentile(99), time.Microsecond))
	ok = ratio <= targetIntakeSlowdown
	row("intake write, turns in flight", busy, fmt.Sprintf("p99 ≤ %.0f× anchor's: %.1f× %s", targetIntakeSlowdown, ratio, kit.Verdict(ok)), ok)
	if err := tw.Flush(); err != nil {
		return false, err
	}
	if r.Unfinished+r.Failed+r.Retried > 0 {
		fmt.Fprintf(stdout, "note: %d turns unfinished, %d failed, %d started more than once\n", r.Unfinished, r.Failed, r.Retried)
		pass = false
	}
	// What bounds the overhead: the turns share serve's work pool.
	acq := after.AcquireCount() - before.AcquireCount()
	waited := after.EmptyAcquireCount() - before.EmptyAcquireCount()
	fmt.Fprintf(stdout, "work pool (%d connections, WEFT_DB_CONNS): %d acquires, %d had to wait, mean acquire %s\n", pool.Config().MaxConns, acq, waited,
		kit.Ms((after.AcquireDuration()-before.AcquireDuration())/time.Duration(max(acq, 1))))
	fmt.Fprintf(stdout, "sent to Postgres on the work pool while the turns ran (their starts and the intake writes on pools of their own), per model call: %s\n", trips.Per(len(r.LLM)))
	ok = peak <= targetRSS
	pass = pass && ok
	fmt.Fprintf(stdout, "peak RSS during the run (VmHWM): this process (the processor and the bench) %s (target ≤ %s) %s; the fake model's child process (%d connections) %s\n",
		kit.MiB(peak), kit.MiB(targetRSS), kit.Verdict(ok), n, kit.MiB(modelPeak))
	return pass, nil
}

// startModel starts the fake model as a child process (`weft-bench turns
// -model-serve ADDR`), so that its connections and the request bodies it
// decodes and keeps are not counted in the processor's memory, and returns
// its OpenAI base URL.
func (b *turnsBench) startModel(ctx context.Context, steps int) (string, error) {
	var addr string
	var err error
	b.model, addr, err = kit.StartSelf(ctx, "fake model", func(addr string) ([]string, []string) {
		return []string{"turns", "-model-serve", addr, "-steps", strconv.Itoa(steps)}, []string{"WEFT_LOG_LEVEL=error"}
	}, kit.Listening(30*time.Second))
	if err != nil {
		return "", err
	}
	return "http://" + addr + "/v1", nil
}

// serveModel serves the fake model on addr until ctx ends, answering as
// scriptSteps does.
func serveModel(ctx context.Context, addr string, steps int) error {
	fake, err := llmtest.Start(addr)
	if err != nil {
		return err
	}
	defer fake.Close()
	fake.SetDefault(scriptSteps(steps))
	<-ctx.Done()
	return nil
}

// keyDelay introduces the model's delay in a thread's first message.
const keyDelay = ": answer after "

// scriptSteps answers like a model that takes steps-1 tool rounds (a
// read_memory call each) and then answers, each call after the delay the
// thread's first message names (nextKey): the fake is a process of its
// own, so the bench tells it the delay through the conversation.
func scriptSteps(steps int) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		var d time.Duration
		if _, after, ok := strings.Cut(firstUser(r), keyDelay); ok {
			d, _ = time.ParseDuration(after) // the bench wrote it
		}
		rounds := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				rounds++
			}
		}
		if rounds < steps-1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_memory", Arguments: `{"label":"bench"}`}}, Delay: d}
		}
		return llmtest.Reply{Text: "Done: the bench turn is answered.", Delay: d}
	}
}

// firstUser is a request's first user message: the thread's key.
func firstUser(r llmtest.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// throughput burns down n queued turns at 1 and 4 workers, each beside
// River burning down n no-op jobs just before on the same pool, prints
// their rates, what they sent to Postgres and their CPU, and returns the
// burn-downs by workers and whether the ratio's target was met.
func (b *turnsBench) throughput(ctx context.Context, stdout io.Writer, n, steps int) (map[int]kit.TurnReport, bool, error) {
	fmt.Fprintf(stdout, "Turns/s, burning down %d queued turns, beside River burning down %d no-op jobs just before, on the same pool (a turn is a River job: River is its ceiling); ratio = turns / River no-op jobs:\n", n, n)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\tturns/s\tRiver no-op jobs/s (anchor)\tratio\ttarget\t")
	pass := true
	burns := map[int]kit.TurnReport{}
	var tripLines, cpuLines []string
	for _, workers := range []int{1, 4} {
		noop, noopCPU, r, err := b.burnDown(ctx, workers, n)
		if err != nil {
			return nil, false, err
		}
		burns[workers] = r
		tripLines = append(tripLines, fmt.Sprintf("  %d worker(s): per thread start (thread, first stitches, turn job): %s; per turn: %s\n    statements per turn by name: %s",
			workers, b.startTrips.Per(n), b.turnTrips.Per(n), b.turnNames))
		perSec := float64(n) / r.Last.Sub(r.First).Seconds()
		noopCPU, turnCPU := noopCPU.Per(n), b.turnCPU.Per(n)
		cpuLines = append(cpuLines, fmt.Sprintf("  %d worker(s): a River no-op job %s (this process %s, Postgres %s); a turn %s (this process %s, the fake model %s, Postgres %s): %.2f of the 2 cores at %.0f turns/s",
			workers, kit.Us(noopCPU.Total()), kit.Us(noopCPU.Self), kit.Us(noopCPU.Postgres), kit.Us(turnCPU.Total()), kit.Us(turnCPU.Self), kit.Us(turnCPU.Child), kit.Us(turnCPU.Postgres),
			turnCPU.Total().Seconds()*perSec, perSec))
		ratio := perSec / noop.PerSecond()
		pass = pass && ratio >= targetTurnRatio
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.2f\t≥ %.2f %s\t\n", workers, perSec, noop.PerSecond(), ratio, targetTurnRatio, kit.Verdict(ratio >= targetTurnRatio))
	}
	if err := tw.Flush(); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(stdout, "Sent to Postgres on the work pool, counted by a pgx tracer (%d model call(s) a turn):\n%s\n", steps, strings.Join(tripLines, "\n"))
	fmt.Fprintf(stdout, "CPU (user and system, from /proc; Postgres is every local process named postgres):\n%s\n", strings.Join(cpuLines, "\n"))

	return burns, pass, nil
}

// latencies runs the paced run (rate a second for d) and prints its
// latencies beside the burn-downs' step overhead, and returns whether
// their targets were met.
func (b *turnsBench) latencies(ctx context.Context, stdout io.Writer, rate int, d time.Duration, burns map[int]kit.TurnReport) (bool, error) {
	pass := true
	paced, err := b.paced(ctx, rate, d)
	if err != nil {
		return false, fmt.Errorf("paced run: %w", err)
	}
	fmt.Fprintf(stdout, "\nLatencies (paced: %d turns enqueued one at a time at %d/s, %d turn workers as serve runs them):\n", len(paced.Pickup), rate, b.cfg.TurnWorkers)
	lt := kit.NewTable(stdout, 50, 99, 100)
	row := func(name string, l kit.Latencies, target string, ok bool) {
		lt.Row(name, l, target)
		pass = pass && ok
	}
	p50, p99 := paced.Pickup.Percentile(50), paced.Pickup.Percentile(99)
	row("pickup, enqueue commit → turn start", paced.Pickup,
		fmt.Sprintf("p50 ≤ %s, p99 ≤ %s %s", targetPickupP50, targetPickupP99, kit.Verdict(p50 <= targetPickupP50 && p99 <= targetPickupP99)),
		p50 <= targetPickupP50 && p99 <= targetPickupP99)
	overheadRow := func(name string, l kit.Latencies) {
		ok := l.Percentile(99) <= targetStepOverhead
		row(name, l, fmt.Sprintf("p99 ≤ %s %s", targetStepOverhead, kit.Verdict(ok)), ok)
	}
	overheadRow("backend overhead per step, paced", paced.StepOverhead)
	overheadRow("backend overhead per step, burn-down 1 worker", burns[1].StepOverhead)
	overheadRow("backend overhead per step, burn-down 4 workers", burns[4].StepOverhead)
	lt.Row("model call (fake, excluded above), paced", paced.LLM, "")
	if err := lt.Flush(); err != nil {
		return false, err
	}
	for _, r := range []kit.TurnReport{burns[1], burns[4], paced} {
		if r.Unfinished+r.Failed+r.Retried > 0 {
			fmt.Fprintf(stdout, "note: %d turns unfinished, %d failed, %d started more than once\n", r.Unfinished, r.Failed, r.Retried)
		}
	}
	return pass, nil
}

// enqueuers is how many goroutines start a run's queued turns: filling
// the queue is not what is measured.
const enqueuers = 8

// openStarter opens the starter's pool (enqueuers connections, counted by
// startCount) and its insert-only River client, as New does for
// continuations, and returns what closes it.
func (b *turnsBench) openStarter(ctx context.Context) (func(), error) {
	pool, err := dbbench.OpenCounting(ctx, app.WithQuery(b.url, "pool_max_conns", strconv.Itoa(enqueuers)), b.startCount)
	if err != nil {
		return nil, err
	}
	jobs, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: b.logger.With("component", "river_insert")})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("river insert client: %w", err)
	}
	b.starter = ingest.New(ingest.Deps{Store: db.New(pool, b.logger), Jobs: jobs, Logger: b.logger})
	return pool.Close, nil
}

// start builds weft as `weft serve` builds it (app.New, with the
// configured pools, turn workers aside), with workers turn workers, the
// fake model behind a new clock, which the processor reports its turns
// to, and its work pool counted by trips. Nothing runs until work.
func (b *turnsBench) start(ctx context.Context, workers int) error {
	cfg := *b.cfg
	cfg.DatabaseURL, cfg.Role, cfg.TurnWorkers, cfg.ShutdownTimeout = b.url, "all", workers, 10*time.Second
	cfg.LLMProvider, cfg.LLMAPIKey, cfg.LLMBaseURL, cfg.Model = "openai", "bench", b.modelURL, "bench-model"
	clock := kit.NewTurnClock(nil)
	cfg.WrapModel = func(p llm.Provider) llm.Provider {
		clock.Provider = p
		return clock
	}
	cfg.Observer, cfg.DBTracer = clock, b.trips
	a, err := app.New(ctx, &cfg, b.logger)
	if err != nil {
		return err
	}
	b.weft, b.clock = a, clock
	return nil
}

// stop closes the App start built; work has stopped it.
func (b *turnsBench) stop() { b.weft.Close() }

// enqueue starts one autonomous thread, as `weft thread create --detach`
// does, and notes when its transaction had committed.
func (b *turnsBench) enqueue(ctx context.Context, in *ingest.Ingester, key string) (kit.Turn, error) {
	th, err := in.StartThread(ctx, in.Builder().WithGoal(key).Autonomous().
		WithInitialPrompt(thread.Stitch{Content: key, Source: thread.PlatformCLI}))
	if err != nil {
		return kit.Turn{}, err
	}
	return kit.Turn{ThreadID: th.ID, Key: key, Committed: time.Now()}, nil
}

// keys names n new threads.
func (b *turnsBench) keys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = b.nextKey()
	}
	return keys
}

// enqueueAll starts a thread for each key through the starter, from that
// many goroutines, and returns their turns.
func (b *turnsBench) enqueueAll(ctx context.Context, keys []string, goroutines int) ([]kit.Turn, error) {
	turns := make([]kit.Turn, len(keys))
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := range errs {
		wg.Go(func() {
			for i := g; i < len(keys) && errs[g] == nil; i += len(errs) {
				turns[i], errs[g] = b.enqueue(ctx, b.starter, keys[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return turns, nil
}

// probe times intake writes through weft's intake (a thread and its
// turn, what a webhook's ack waits on), rate a second for d, and returns
// their turns and sorted latencies.
func (b *turnsBench) probe(ctx context.Context, rate int, d time.Duration) ([]kit.Turn, kit.Latencies, error) {
	var turns []kit.Turn
	var lat kit.Latencies
	_, err := kit.PaceFor(ctx, rate, d, func(int) error {
		t0 := time.Now()
		t, err := b.enqueue(ctx, b.weft.Ingester(), b.nextKey())
		if err != nil {
			return fmt.Errorf("intake probe: %w", err)
		}
		lat = append(lat, time.Since(t0))
		turns = append(turns, t)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return turns, lat.Sorted(), nil
}

// nextKey names a new thread, and the model's delay for it.
func (b *turnsBench) nextKey() string {
	b.seq++
	return fmt.Sprintf("bench turn %d%s%s", b.seq, keyDelay, b.delay)
}

// startCPUProfile profiles this process's CPU into path until stop.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	var once sync.Once
	var closeErr error
	return func() error {
		once.Do(func() {
			pprof.StopCPUProfile()
			closeErr = f.Close()
		})
		return closeErr
	}, nil
}

// burnDown builds weft with workers turn workers, burns down n River
// no-op jobs on its work pool (the anchor, and what they cost in CPU),
// then queues n turns with no worker running, starts the workers and
// times them until all have finished.
func (b *turnsBench) burnDown(ctx context.Context, workers, n int) (kit.Rate, kit.CPU, kit.TurnReport, error) {
	if err := b.start(ctx, workers); err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, err
	}
	defer b.stop()
	before, err := kit.SampleCPU(b.model.PID())
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, err
	}
	noop, err := kit.RiverNoop(ctx, b.weft.Store().Pool(), workers, n)
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, fmt.Errorf("river no-op at %d workers: %w", workers, err)
	}
	after, err := kit.SampleCPU(b.model.PID())
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, err
	}
	keys := b.keys(n)
	start := b.startCount.Count()
	// Four enqueuers: filling the queue is not what is measured.
	turns, err := b.enqueueAll(ctx, keys, 4)
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, fmt.Errorf("burn down at %d workers: %w", workers, err)
	}
	b.startTrips = b.startCount.Count().Sub(start)
	cpu, err := kit.SampleCPU(b.model.PID())
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, err
	}
	worked, names := b.trips.Count(), b.trips.ByName()
	stopProfile := func() error { return nil }
	if b.burnProfile != "" && workers == 4 {
		if stopProfile, err = startCPUProfile(b.burnProfile); err != nil {
			return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, err
		}
	}
	r, err := b.work(ctx, func(context.Context) ([]kit.Turn, error) { return turns, nil })
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	b.turnTrips = b.trips.Count().Sub(worked)
	b.turnNames = dbbench.NamesPer(b.trips.ByName(), names, n)
	if end, cerr := kit.SampleCPU(b.model.PID()); cerr == nil {
		b.turnCPU = end.Sub(cpu)
	}
	if err != nil {
		return kit.Rate{}, kit.CPU{}, kit.TurnReport{}, fmt.Errorf("burn down at %d workers: %w", workers, err)
	}
	return noop, after.Sub(before), r, nil
}

// paced runs serve's number of turn workers and enqueues turns one at a
// time through weft's intake, rate a second, for d: each turn finds the
// processor idle, so its pickup is the queue's latency and not a
// backlog's.
func (b *turnsBench) paced(ctx context.Context, rate int, d time.Duration) (kit.TurnReport, error) {
	if err := b.start(ctx, b.cfg.TurnWorkers); err != nil {
		return kit.TurnReport{}, err
	}
	defer b.stop()
	return b.work(ctx, func(ctx context.Context) ([]kit.Turn, error) {
		// Let River's fetch loops and LISTEN start before the first turn.
		if err := retry.Sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
		var turns []kit.Turn
		_, err := kit.PaceFor(ctx, rate, d, func(int) error {
			t, err := b.enqueue(ctx, b.weft.Ingester(), b.nextKey())
			if err != nil {
				return fmt.Errorf("enqueue: %w", err)
			}
			turns = append(turns, t)
			return nil
		})
		return turns, err
	})
}

// turnsTimeout bounds how long a run waits for its turns: far more than a
// healthy run needs, but a box shared with other work (load 60 on 2 cores)
// was seen to run 300 turns at 1 worker in over a minute.
const turnsTimeout = 5 * time.Minute

// work starts weft working jobs, gets the run's turns from feed, waits
// until they have all finished, and stops weft.
func (b *turnsBench) work(ctx context.Context, feed func(context.Context) ([]kit.Turn, error)) (kit.TurnReport, error) {
	b.clock.Reset()
	if err := b.weft.Work(ctx); err != nil {
		return kit.TurnReport{}, err
	}
	defer func() {
		if err := b.weft.Stop(ctx); err != nil {
			b.logger.Warn("stop weft", slog.Any("error", err))
		}
	}()
	turns, err := feed(ctx)
	if err != nil {
		return kit.TurnReport{}, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, turnsTimeout+time.Duration(len(turns))*10*time.Millisecond)
	defer cancel()
	if err := b.clock.WaitFinished(waitCtx, len(turns)); err != nil {
		return kit.TurnReport{}, fmt.Errorf("%d of %d turns finished: %w", b.clock.Finished(), len(turns), err)
	}
	return b.clock.Report(turns), nil
}
