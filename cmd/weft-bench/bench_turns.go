package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbbench"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/benchmark"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// Targets from docs/architecture.md ("Numbers we hold ourselves to").
const (
	targetTurnRatio    = 0.5
	targetPickupP50    = 5 * time.Millisecond
	targetPickupP99    = 50 * time.Millisecond
	targetStepOverhead = 50 * time.Millisecond
)

// turnsBench is one `weft bench turns` run's wiring: the scratch store, the
// fake model behind the real OpenAI adapter, and the clock on both.
type turnsBench struct {
	cfg    *app.Config
	logger *slog.Logger
	pool   *pgxpool.Pool
	store  *db.Store
	runner *agent.Runner
	clock  *benchmark.TurnClock
	// seq numbers the threads, whose goals (and so first user messages)
	// must be unique for the clock to match model calls to turns.
	seq int
}

// benchTurns measures the processor on an instant fake model: turns/s
// beside a plain SKIP LOCKED queue, pickup latency, and the backend's time
// per agent step. It works in a scratch database on the configured server,
// dropped afterwards.
func benchTurns(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench turns", flag.ContinueOnError)
	turns := fs.Int("turns", 2000, "queued turns each throughput run burns down")
	duration := fs.Duration("duration", 5*time.Second, "how long the paced pickup run and each queue baseline run last")
	rate := fs.Int("rate", 50, "turns per second enqueued, one at a time, in the paced pickup run")
	steps := fs.Int("steps", 2, "model calls per turn: a read_memory tool round before each but the last, which answers")
	keep := fs.Bool("keep", false, "keep the scratch database afterwards")
	scratch := fs.String("db", "weft_bench_turns", "name of the scratch database (dropped first if it exists)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *turns < 1 || *rate < 1 || *steps < 1 || *duration <= 0 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := scratchDatabase(ctx, cfg, logger, *scratch, *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	// The processor gets a pool as `weft serve` opens it (WEFT_DB_CONNS),
	// so the figures are serve's; the baseline gets its own, big enough
	// for its clients.
	pool, err := db.Open(ctx, app.WithQuery(url, "pool_max_conns", strconv.Itoa(cfg.DBConns)))
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	basePool, err := db.Open(ctx, app.WithQuery(url, "pool_max_conns", "8"))
	if err != nil {
		return err
	}
	defer basePool.Close()

	fake := llmtest.NewServer(nil)
	defer fake.Close()
	fake.SetDefault(scriptSteps(*steps))
	provider, err := llm.New(llm.Config{Provider: "openai", APIKey: "bench", BaseURL: fake.OpenAIBaseURL()})
	if err != nil {
		return err
	}
	b := &turnsBench{cfg: cfg, logger: logger, pool: pool, store: db.New(pool, logger), clock: benchmark.NewTurnClock(provider)}
	registry, err := tools.NewRegistry(tools.Memory(b.store)...)
	if err != nil {
		return err
	}
	b.runner = &agent.Runner{LLM: b.clock, Model: "bench-model", Tools: registry, Logger: logger.With("component", "agent")}

	fmt.Fprintf(stdout, "weft-bench turns: scratch database %s; model: llmtest (in-process, instant) through the OpenAI adapter; %d model call(s) per turn\n\n", *scratch, *steps)

	fmt.Fprintf(stdout, "Turns/s, burning down %d queued turns, beside %d River no-op jobs and a plain SKIP LOCKED claim+complete loop (1 job per claim, %s before the turns and %s after, pooled: the disk's flush time drifts); ratio = turns / claim+complete:\n", *turns, *turns, *duration, *duration)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\tturns/s\tRiver no-op jobs/s\tclaim+complete/s\tratio\ttarget\tRiver no-op ratio\t")
	pass := true
	// The queue's own ceiling: a turn on River cannot outrun River's no-op
	// jobs, so a no-op ratio under the target means no turn could meet it.
	var queueBound []string
	burns := map[int]benchmark.TurnReport{}
	for _, workers := range []int{1, 4} {
		before, err := dbbench.ClaimComplete(ctx, basePool, workers, *duration)
		if err != nil {
			return fmt.Errorf("queue baseline: %w", err)
		}
		noop, err := benchmark.RiverNoop(ctx, pool, workers, *turns)
		if err != nil {
			return fmt.Errorf("river no-op at %d workers: %w", workers, err)
		}
		r, err := b.burnDown(ctx, workers, *turns)
		if err != nil {
			return fmt.Errorf("burn down at %d workers: %w", workers, err)
		}
		burns[workers] = r
		after, err := dbbench.ClaimComplete(ctx, basePool, workers, *duration)
		if err != nil {
			return fmt.Errorf("queue baseline: %w", err)
		}
		base := dbbench.Rate{Ops: before.Ops + after.Ops, Elapsed: before.Elapsed + after.Elapsed}
		perSec := float64(*turns) / r.Last.Sub(r.First).Seconds()
		ratio := perSec / base.PerSecond()
		pass = pass && ratio >= targetTurnRatio
		noopRatio := noop.PerSecond() / base.PerSecond()
		if noopRatio < targetTurnRatio {
			queueBound = append(queueBound, fmt.Sprintf("%.3f at %d worker(s)", noopRatio, workers))
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.0f\t%.2f\t≥ %.1f %s\t%.2f\t\n", workers, perSec, noop.PerSecond(), base.PerSecond(), ratio, targetTurnRatio, verdict(ratio >= targetTurnRatio), noopRatio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(queueBound) > 0 {
		fmt.Fprintf(stdout, "River's no-op jobs alone are under the target ratio (%s): a turn run as one River job cannot meet it there.\n", strings.Join(queueBound, ", "))
	}

	paced, err := b.paced(ctx, *rate, *duration)
	if err != nil {
		return fmt.Errorf("paced run: %w", err)
	}
	fmt.Fprintf(stdout, "\nLatencies (paced: %d turns enqueued one at a time at %d/s, %d turn workers as serve runs them):\n", len(paced.Pickup), *rate, b.cfg.TurnWorkers)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tsamples\tp50\tp99\tmax\ttarget\t")
	row := func(name string, l benchmark.Latencies, target string, ok bool) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", name, len(l), ms(l.Percentile(50)), ms(l.Percentile(99)), ms(l.Percentile(100)), target)
		pass = pass && ok
	}
	p50, p99 := paced.Pickup.Percentile(50), paced.Pickup.Percentile(99)
	row("pickup, enqueue commit → turn start", paced.Pickup,
		fmt.Sprintf("p50 ≤ %s, p99 ≤ %s %s", targetPickupP50, targetPickupP99, verdict(p50 <= targetPickupP50 && p99 <= targetPickupP99)),
		p50 <= targetPickupP50 && p99 <= targetPickupP99)
	overheadRow := func(name string, l benchmark.Latencies) {
		ok := l.Percentile(99) <= targetStepOverhead
		row(name, l, fmt.Sprintf("p99 ≤ %s %s", targetStepOverhead, verdict(ok)), ok)
	}
	overheadRow("backend overhead per step, paced", paced.StepOverhead)
	overheadRow("backend overhead per step, burn-down 1 worker", burns[1].StepOverhead)
	overheadRow("backend overhead per step, burn-down 4 workers", burns[4].StepOverhead)
	fmt.Fprintf(tw, "model call (fake, excluded above), paced\t%d\t%s\t%s\t%s\t\t\n", len(paced.LLM),
		ms(paced.LLM.Percentile(50)), ms(paced.LLM.Percentile(99)), ms(paced.LLM.Percentile(100)))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range []benchmark.TurnReport{burns[1], burns[4], paced} {
		if r.Unfinished+r.Failed+r.Retried > 0 {
			fmt.Fprintf(stdout, "note: %d turns unfinished, %d failed, %d started more than once\n", r.Unfinished, r.Failed, r.Retried)
		}
	}
	fmt.Fprintf(stdout, "\noverall: %s\n", verdict(pass))
	return nil
}

// scriptSteps answers like a model that takes steps-1 tool rounds (a
// read_memory call each) and then answers, at once.
func scriptSteps(steps int) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		rounds := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				rounds++
			}
		}
		if rounds < steps-1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_memory", Arguments: `{"label":"bench"}`}}}
		}
		return llmtest.Reply{Text: "Done: the bench turn is answered."}
	}
}

// newProcessor builds a processor with workers turn workers, reporting to
// the clock, configured as serve configures it otherwise.
func (b *turnsBench) newProcessor(workers int) (*processor.Processor, *ingest.Ingester, error) {
	proc, err := processor.New(b.pool, b.store, b.runner, nil, processor.Config{
		Workers: true, TurnWorkers: workers, LeaseTTL: b.cfg.LeaseTTL, SweepInterval: b.cfg.SweepInterval, Observer: b.clock,
	}, b.logger)
	if err != nil {
		return nil, nil, err
	}
	return proc, ingest.New(b.store, proc.Inserter(), nil, b.logger), nil
}

// enqueue starts one autonomous thread, as `weft thread create --detach`
// does, and notes when its transaction had committed.
func (b *turnsBench) enqueue(ctx context.Context, in *ingest.Ingester, key string) (benchmark.Turn, error) {
	th, err := in.StartThread(ctx, in.Builder().WithGoal(key).Autonomous().
		WithInitialPrompt(thread.Stitch{Content: key, Source: thread.PlatformCLI}))
	if err != nil {
		return benchmark.Turn{}, err
	}
	return benchmark.Turn{ThreadID: th.ID, Key: key, Committed: time.Now()}, nil
}

func (b *turnsBench) nextKey() string {
	b.seq++
	return fmt.Sprintf("bench turn %d: answer at once", b.seq)
}

// burnDown queues n turns with no worker running, then starts workers
// turn workers and times them until all have finished.
func (b *turnsBench) burnDown(ctx context.Context, workers, n int) (benchmark.TurnReport, error) {
	proc, in, err := b.newProcessor(workers)
	if err != nil {
		return benchmark.TurnReport{}, err
	}
	turns := make([]benchmark.Turn, n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = b.nextKey()
	}
	// Four enqueuers: filling the queue is not what is measured.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Go(func() {
			for i := g; i < n && errs[g] == nil; i += len(errs) {
				turns[i], errs[g] = b.enqueue(ctx, in, keys[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return benchmark.TurnReport{}, fmt.Errorf("enqueue: %w", err)
		}
	}
	return b.work(ctx, proc, func(context.Context, *ingest.Ingester) ([]benchmark.Turn, error) { return turns, nil }, in)
}

// paced runs serve's number of turn workers and enqueues turns one at a
// time, rate a second, for d: each turn finds the processor idle, so its
// pickup is the queue's latency and not a backlog's.
func (b *turnsBench) paced(ctx context.Context, rate int, d time.Duration) (benchmark.TurnReport, error) {
	proc, in, err := b.newProcessor(b.cfg.TurnWorkers)
	if err != nil {
		return benchmark.TurnReport{}, err
	}
	return b.work(ctx, proc, func(ctx context.Context, in *ingest.Ingester) ([]benchmark.Turn, error) {
		// Let River's fetch loops and LISTEN start before the first turn.
		if err := retry.Sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
		var turns []benchmark.Turn
		interval := time.Second / time.Duration(rate)
		start := time.Now()
		for i := 0; time.Since(start) < d; i++ {
			if err := retry.Sleep(ctx, time.Until(start.Add(time.Duration(i)*interval))); err != nil {
				return nil, err
			}
			t, err := b.enqueue(ctx, in, b.nextKey())
			if err != nil {
				return nil, fmt.Errorf("enqueue: %w", err)
			}
			turns = append(turns, t)
		}
		return turns, nil
	}, in)
}

// turnsTimeout bounds how long a run waits for its turns: at a few hundred
// turns a second, a minute is far more than any healthy run needs.
const turnsTimeout = time.Minute

// work starts proc, gets the run's turns from feed, waits until they have
// all finished, and stops proc.
func (b *turnsBench) work(ctx context.Context, proc *processor.Processor, feed func(context.Context, *ingest.Ingester) ([]benchmark.Turn, error), in *ingest.Ingester) (benchmark.TurnReport, error) {
	b.clock.Reset()
	if err := proc.Start(ctx); err != nil {
		return benchmark.TurnReport{}, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := proc.Stop(stopCtx); err != nil {
			b.logger.Warn("stop processor", slog.Any("error", err))
		}
	}()
	turns, err := feed(ctx, in)
	if err != nil {
		return benchmark.TurnReport{}, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, turnsTimeout+time.Duration(len(turns))*10*time.Millisecond)
	defer cancel()
	if err := b.clock.WaitFinished(waitCtx, len(turns)); err != nil {
		return benchmark.TurnReport{}, fmt.Errorf("%d of %d turns finished: %w", b.clock.Finished(), len(turns), err)
	}
	return b.clock.Report(turns), nil
}
