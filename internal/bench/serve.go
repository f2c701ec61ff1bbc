package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// targetRSS bounds weft serve's peak memory (docs/architecture.md).
const targetRSS = 256 << 20

// served is weft serve as a child process (`weft-bench serve`), the server
// the linear, discord, slack and soak benches drive, with the fake model
// it calls.
type served struct {
	proc *kit.Process
	addr string
	// timer times the model calls; nil unless asked for.
	timer *kit.ModelTimer
}

// startServed starts the fake model answering with reply (behind a timing
// proxy when timed) and weft serve with role on the database at url, with
// env's platform settings, and waits until it is ready. The model's fakes
// live as long as weft serve.
func startServed(ctx context.Context, url, role string, timed bool, reply func(llmtest.Request) llmtest.Reply, env ...string) (*served, error) {
	model := llmtest.NewServer(nil)
	model.SetDefault(reply)
	s := &served{}
	closeModel := func() {
		if s.timer != nil {
			s.timer.Close()
		}
		model.Close()
	}
	modelURL := model.OpenAIBaseURL()
	if timed {
		var err error
		if s.timer, err = kit.NewModelTimer(model.URL()); err != nil {
			model.Close()
			return nil, err
		}
		modelURL = s.timer.URL + "/v1"
	}
	var err error
	if s.proc, s.addr, err = kit.StartServe(ctx, url, role, modelURL, env...); err != nil {
		closeModel()
		return nil, err
	}
	go func() { <-s.proc.Done(); closeModel() }()
	return s, nil
}

// discordEnv is weft serve's settings for the fake Discord d, its gateway
// on one shard in guild.
func discordEnv(d *discordtest.Server, guild string) []string {
	return []string{"DISCORD_BOT_TOKEN=" + discordtest.Token, "DISCORD_API_URL=" + d.URL(), "DISCORD_GATEWAY_URL=",
		"DISCORD_APPLICATION_ID=" + d.ApplicationID(), "DISCORD_ALLOWED_GUILDS=" + guild,
		"DISCORD_PUBLIC_KEY=" + discordtest.NewInteractionSigner().PublicKeyHex(), "DISCORD_SHARD_COUNT=1"}
}

// awaitGateway waits until weft's gateway has identified to the fake
// Discord d, and stops weft serve if it never does.
func (s *served) awaitGateway(ctx context.Context, d *discordtest.Server) error {
	for deadline := time.Now().Add(30 * time.Second); len(d.Identifies()) == 0; {
		if time.Now().After(deadline) {
			_ = s.proc.Stop(5 * time.Second)
			return fmt.Errorf("weft's gateway never identified\nweft serve stderr:\n%s", s.proc.Stderr())
		}
		if err := retry.Sleep(ctx, 20*time.Millisecond); err != nil {
			_ = s.proc.Stop(5 * time.Second)
			return err
		}
	}
	return nil
}

// stop stops weft serve, logging what it said if it would not stop.
func (s *served) stop(logger *slog.Logger) {
	if err := s.proc.Stop(15 * time.Second); err != nil {
		logger.Warn("stop weft serve", slog.Any("error", err), slog.String("stderr", s.proc.Stderr()))
	}
}

// overall prints weft serve's peak memory against targetRSS, then the
// bench's verdict: pass, and the memory within its target.
func (s *served) overall(stdout io.Writer, pass bool) error {
	ok, err := s.peakRSS(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\noverall: %s\n", kit.Verdict(pass && ok))
	return nil
}

// peakRSS prints weft serve's peak memory so far against targetRSS and
// reports whether it was met.
func (s *served) peakRSS(stdout io.Writer) (bool, error) {
	_, peak, err := s.proc.Memory()
	if err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "\npeak RSS of weft serve (VmHWM): %s (target ≤ %s) %s\n", kit.MiB(peak), kit.MiB(targetRSS), kit.Verdict(peak <= targetRSS))
	return peak <= targetRSS, nil
}

// linearIssue is the fake Linear of the benches that open sessions, with
// the one issue all sessions are on (so the turn's history lookup finds
// it), and the signer of their deliveries.
type linearIssue struct {
	linear          *lineartest.Server
	signer          lineartest.Signer
	issueID, teamID string
}

func newLinearIssue(secret string) linearIssue {
	l := linearIssue{linear: lineartest.NewServer(nil), signer: lineartest.Signer{Secret: []byte(secret)},
		issueID: uuid.NewString(), teamID: uuid.NewString()}
	l.linear.AddTeam(lineartest.Team{ID: l.teamID, Key: "ENG", Name: "Engineering", States: []lineartest.State{
		{ID: uuid.NewString(), Name: "Todo", Type: "unstarted"}, {ID: uuid.NewString(), Name: "In Progress", Type: "started", Position: 1}}})
	l.linear.AddIssue(lineartest.Issue{ID: l.issueID, Identifier: "ENG-1", Title: "Fix the login redirect", TeamID: l.teamID})
	return l
}

// created signs a mention opening a new session on the issue, stamped at,
// and registers the session with the fake.
func (l linearIssue) created(at time.Time) (lineartest.Delivery, lineartest.SessionOpts) {
	dl, o := l.signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), IssueID: l.issueID, TeamID: l.teamID,
		CommentBody: "@weft why does the login redirect lose the return URL?", PromptContext: "Why does the login redirect lose the return URL?",
		CreatedAt: at, Timestamp: at})
	l.linear.AddSession(o.SessionID, l.issueID)
	return dl, o
}

// inProcess is weft run in this process, as `weft serve` runs it
// (app.New, then app.Run) on a loopback address: for the benches that time
// its HTTP surface without a child process between them and the figures.
type inProcess struct {
	*app.App
	addr string
	stop func() error
}

// runInProcess builds weft from cfg on the database at url, its API,
// /mcp and console behind token, and runs it with role until stop.
func runInProcess(ctx context.Context, cfg *app.Config, url, role, token string, logger *slog.Logger) (*inProcess, error) {
	addr, err := kit.FreeAddr()
	if err != nil {
		return nil, err
	}
	c := *cfg
	c.DatabaseURL, c.Addr, c.Role, c.APIToken, c.DebugAddr, c.ShutdownTimeout = url, addr, role, token, "", 5*time.Second
	a, err := app.New(ctx, &c, logger)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done, gone := make(chan error, 1), make(chan struct{})
	go func() {
		done <- a.Run(runCtx)
		close(gone)
	}()
	w := &inProcess{App: a, addr: addr, stop: func() error {
		cancel()
		return <-done
	}}
	if err := kit.WaitHTTP(ctx, "http://"+addr+"/readyz", 30*time.Second, gone); err != nil {
		return nil, errors.Join(fmt.Errorf("weft not ready: %w", err), w.stop())
	}
	return w, nil
}

// acksBesideAnchor times n deliveries made by next, open-loop at rate, on
// weft's door at door, then the same on the anchor startAnchor starts (a
// minimal signed handler on the same database, its door's URL returned)
// once weft's run is over.
func acksBesideAnchor(ctx context.Context, door string, rate, n int, next func(i int) kit.Delivery,
	startAnchor func() (*kit.Process, string, error)) (weft, anchor kit.Acks, err error) {
	if weft, err = kit.TimeAcks(ctx, door, rate, n, next); err != nil {
		return kit.Acks{}, kit.Acks{}, err
	}
	p, anchorURL, err := startAnchor()
	if err != nil {
		return kit.Acks{}, kit.Acks{}, err
	}
	anchor, err = kit.TimeAcks(ctx, anchorURL, rate, n, next)
	if stopErr := p.Stop(15 * time.Second); err == nil {
		err = stopErr
	}
	return weft, anchor, err
}

// ackRows adds an acknowledgement run's rows to tw: weft's, against
// target, and the anchor's, with weft's p99 as a multiple of it.
func ackRows(tw *kit.Table, weft, anchor kit.Acks, target string) {
	tw.Row("signed delivery → acknowledgement", weft.Took, target)
	tw.Row("  the anchor's", anchor.Took, fmt.Sprintf("weft's p99 is %.1f× it", anchorRatio(weft, anchor)))
}

// anchorRatio is weft's p99 acknowledgement as a multiple of the
// anchor's.
func anchorRatio(weft, anchor kit.Acks) float64 {
	return float64(weft.Took.Percentile(99)) / float64(max(anchor.Took.Percentile(99), time.Microsecond))
}
