package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// scaleSecret signs the scale bench's Linear deliveries.
const scaleSecret = "weft-bench-scale-secret"

// benchScale runs n api and n worker replicas (`weft-bench serve` child
// processes) on one scratch database for each n of -replicas, offers
// Linear sessions at each rate of -rates, and reports per step the
// sessions answered a second, the turns a second, and the CPU a session
// cost (every replica, this generator and Postgres). The knee is the
// highest rate whose sessions were all answered within -settle of the
// step's end. At the knee, with two or more workers, one worker is then
// SIGKILLed halfway through a last step: every acknowledged session must
// still be answered, and none twice.
func benchScale(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench scale", flag.ContinueOnError)
	replicas := fs.String("replicas", "1,2,4", "api and worker replicas of each run (n of each)")
	rates := fs.String("rates", "50,100,200,400", "offered sessions a second, step by step")
	duration := fs.Duration("duration", 5*time.Second, "how long each step offers its rate")
	settle := fs.Duration("settle", 10*time.Second, "how long after a step its sessions may take to be answered")
	modelDelay := fs.Duration("model-delay", 50*time.Millisecond, "the fake model's answer time")
	kill := fs.Bool("kill", true, "SIGKILL a worker during a last step at the knee (two or more workers)")
	// A killed worker's turns resume once their lease lapses (5 s here),
	// its jobs at the next sweep or when River rescues them: weft promises
	// two minutes.
	recovery := fs.Duration("recover", 3*time.Minute, "how long the kill step's sessions may take to be answered")
	keep := fs.Bool("keep", false, "keep the scratch database")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	ns, err := ints(*replicas)
	if err != nil {
		return fmt.Errorf("-replicas: %w", err)
	}
	rs, err := ints(*rates)
	if err != nil {
		return fmt.Errorf("-rates: %w", err)
	}
	fmt.Fprintf(stdout, "scale: n api + n worker replicas on one database, Linear sessions, model %s, %s a step\n", *modelDelay, *duration)
	fmt.Fprintf(stdout, "%-3s %6s %8s %6s %10s %8s %12s %s\n", "n", "rate", "acked", "shed", "answered/s", "turns/s", "cpu/session", "held")
	for _, n := range ns {
		if err := scaleRun(ctx, cfg, logger, stdout, n, rs, *duration, *settle, *recovery, *modelDelay, *kill, *keep); err != nil {
			return fmt.Errorf("n=%d: %w", n, err)
		}
	}
	return nil
}

// ints parses a comma-separated list of positive numbers.
func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// scaleFleet is one run's replicas and the fakes they talk to.
type scaleFleet struct {
	linear  *lineartest.Server
	signer  lineartest.Signer
	issueID string
	teamID  string
	api     []*kit.Process
	loads   []*kit.Load
	workers []*kit.Process
	// pool reads the turns River completed.
	pool *pgxpool.Pool
}

func scaleRun(ctx context.Context, cfg *app.Config, logger *slog.Logger, stdout io.Writer, n int, rates []int, duration, settle, recovery, modelDelay time.Duration, kill, keep bool) error {
	url, cleanup, err := kit.Scratch(ctx, cfg.DatabaseURL, fmt.Sprintf("weft_bench_scale_%d", n), keep, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	model := llmtest.NewServer(nil)
	defer model.Close()
	model.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Keep the return URL in the state parameter.", Delay: modelDelay}
	})
	f := &scaleFleet{linear: lineartest.NewServer(nil), signer: lineartest.Signer{Secret: []byte(scaleSecret)},
		issueID: uuid.NewString(), teamID: uuid.NewString()}
	defer f.linear.Close()
	f.linear.AddTeam(lineartest.Team{ID: f.teamID, Key: "ENG", Name: "Engineering"})
	f.linear.AddIssue(lineartest.Issue{ID: f.issueID, Identifier: "ENG-1", Title: "Fix the login redirect", TeamID: f.teamID})
	_, f.pool, err = app.Open(ctx, &app.Config{DatabaseURL: url, DBConns: 2}, logger)
	if err != nil {
		return err
	}
	defer f.pool.Close()
	defer f.stop()
	for i := range 2 * n {
		role := "api"
		if i >= n {
			role = "worker"
		}
		if err := f.start(ctx, url, role, model.OpenAIBaseURL()); err != nil {
			return err
		}
	}

	knee := 0
	for _, rate := range rates {
		s, err := f.step(ctx, rate, duration, settle, nil)
		if err != nil {
			return err
		}
		held := s.unanswered == 0 && s.shed == 0 && s.failed == 0
		s.print(stdout, n, rate, kit.Verdict(held))
		if !held {
			break
		}
		knee = rate
	}
	fmt.Fprintf(stdout, "n=%d: knee %d sessions/s offered\n", n, knee)
	if !kill || n < 2 || knee == 0 {
		return nil
	}
	victim := f.workers[0]
	s, err := f.step(ctx, knee, duration, recovery, func() {
		_ = syscall.Kill(victim.PID(), syscall.SIGKILL)
	})
	if err != nil {
		return err
	}
	ok := s.unanswered == 0 && s.twice == 0
	s.print(stdout, n, knee, fmt.Sprintf("worker killed: %d lost, %d posted twice, the last answered %s after the step began %s",
		s.unanswered, s.twice, s.lastAnswer.Round(100*time.Millisecond), kit.Verdict(ok)))
	if !ok {
		return errors.New("a worker's death lost or repeated sessions")
	}
	return nil
}

func (f *scaleFleet) start(ctx context.Context, url, role, modelURL string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	addr, err := kit.FreeAddr()
	if err != nil {
		return err
	}
	metricsAddr, err := kit.FreeAddr()
	if err != nil {
		return err
	}
	p, err := kit.Start(exe, []string{"serve"}, []string{
		"DATABASE_URL=" + url, "WEFT_ADDR=" + addr, "WEFT_METRICS_ADDR=" + metricsAddr, "WEFT_LOG_LEVEL=error", "WEFT_ROLE=" + role,
		"WEFT_SHUTDOWN_TIMEOUT=5s", "WEFT_LEASE_TTL=5s",
		"WEFT_LLM_PROVIDER=openai", "OPENAI_API_KEY=bench", "OPENAI_BASE_URL=" + modelURL,
		"LINEAR_WEBHOOK_SECRET=" + scaleSecret, "LINEAR_ACCESS_TOKEN=" + lineartest.AccessToken, "LINEAR_API_URL=" + f.linear.URL(),
	})
	if err != nil {
		return err
	}
	// Every role answers /readyz on WEFT_METRICS_ADDR once its processor runs.
	if err := p.WaitReady(ctx, "http://"+metricsAddr+"/readyz", 60*time.Second); err != nil {
		_ = p.Stop(5 * time.Second)
		return fmt.Errorf("%w\nweft serve stderr:\n%s", err, p.Stderr())
	}
	if role == "worker" {
		f.workers = append(f.workers, p)
		return nil
	}
	f.api = append(f.api, p)
	f.loads = append(f.loads, kit.NewLoad("http://"+addr+"/webhooks/linear", 5*time.Second, 1024))
	return nil
}

func (f *scaleFleet) stop() {
	for _, l := range f.loads {
		l.Close()
	}
	for _, p := range append(f.api, f.workers...) {
		_ = p.Stop(10 * time.Second)
	}
}

// scaleStep is what one step measured.
type scaleStep struct {
	acked, shed, failed, unanswered, twice int
	answeredPerSec, turnsPerSec            float64
	cpuPerSession                          time.Duration
	// lastAnswer is when the last response came, from the step's start.
	lastAnswer time.Duration
}

func (s scaleStep) print(w io.Writer, n, rate int, note string) {
	fmt.Fprintf(w, "%-3d %6d %8d %6d %10.1f %8.1f %12s %s\n", n, rate, s.acked, s.shed, s.answeredPerSec, s.turnsPerSec, kit.Ms(s.cpuPerSession), note)
}

// step offers rate sessions a second for d, spread over the api replicas,
// calling during (if set) halfway, then waits up to settle for each
// acknowledged session's response.
func (f *scaleFleet) step(ctx context.Context, rate int, d, settle time.Duration, during func()) (scaleStep, error) {
	total := int(d.Seconds() * float64(rate))
	per := make([][]kit.Delivery, len(f.loads))
	sessions := make([][]string, len(f.loads))
	for i := range total {
		dl, o := f.signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), IssueID: f.issueID, TeamID: f.teamID,
			CommentBody: "@weft why does the login redirect lose the return URL?", PromptContext: "Why does the login redirect lose the return URL?"})
		f.linear.AddSession(o.SessionID, f.issueID)
		k := i % len(f.loads)
		per[k] = append(per[k], kit.Delivery{Body: dl.Body, Header: dl.Header})
		sessions[k] = append(sessions[k], o.SessionID)
	}
	before, err := f.cpu()
	if err != nil {
		return scaleStep{}, err
	}
	start := time.Now()
	if during != nil {
		t := time.AfterFunc(d/2, during)
		defer t.Stop()
	}
	results := make([][]kit.Result, len(f.loads))
	var wg sync.WaitGroup
	for k, l := range f.loads {
		wg.Go(func() { results[k] = l.Run(ctx, max(1, rate/len(f.loads)), per[k]) })
	}
	wg.Wait()

	var s scaleStep
	acked := map[string]bool{}
	for k := range results {
		t := kit.Count(results[k])
		s.shed += t.Shed
		s.failed += t.Failed + t.Other + t.Saturated
		for i, r := range results[k] {
			if r.Status == 200 {
				acked[sessions[k][i]] = true
			}
		}
	}
	s.acked = len(acked)
	deadline := time.Now().Add(settle)
	var responses map[string]int
	var last time.Time
	for {
		responses, last = map[string]int{}, time.Time{}
		for _, a := range f.linear.AllActivities() {
			if a.Type == "response" && acked[a.SessionID] {
				responses[a.SessionID]++
				if a.CreatedAt.After(last) {
					last = a.CreatedAt
				}
			}
		}
		if len(responses) == len(acked) || time.Now().After(deadline) {
			break
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return scaleStep{}, err
		}
	}
	after, err := f.cpu()
	if err != nil {
		return scaleStep{}, err
	}
	s.unanswered = len(acked) - len(responses)
	s.lastAnswer = last.Sub(start)
	for _, c := range responses {
		if c > 1 {
			s.twice++
		}
	}
	if elapsed := last.Sub(start).Seconds(); elapsed > 0 {
		s.answeredPerSec = float64(len(responses)) / elapsed
		var turns int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND state = 'completed'
			AND finalized_at BETWEEN $1 AND $2`, start, last).Scan(&turns); err != nil {
			return scaleStep{}, fmt.Errorf("count turns: %w", err)
		}
		s.turnsPerSec = float64(turns) / elapsed
	}
	s.cpuPerSession = after.since(before) / time.Duration(max(1, len(responses)))
	return s, nil
}

// scaleCPU is a sample of the CPU time of the replicas (by pid), this
// process and Postgres.
type scaleCPU struct {
	base     kit.CPU
	replicas map[int]time.Duration
}

// cpu samples the live replicas, this process and Postgres.
func (f *scaleFleet) cpu() (scaleCPU, error) {
	base, err := kit.SampleCPU(0)
	if err != nil {
		return scaleCPU{}, err
	}
	c := scaleCPU{base: base, replicas: map[int]time.Duration{}}
	for _, p := range append(f.api, f.workers...) {
		if s, err := kit.SampleCPU(p.PID()); err == nil {
			c.replicas[p.PID()] = s.Child
		}
	}
	return c, nil
}

// since is the CPU spent between two samples. A replica killed in between
// is missing from the later one, so the kill step's figure errs low by
// what it did before it died.
func (c scaleCPU) since(earlier scaleCPU) time.Duration {
	total := c.base.Sub(earlier.base).Total()
	for pid, d := range c.replicas {
		total += d - earlier.replicas[pid]
	}
	return total
}
