// Package app builds weft from its configuration and runs it: the two
// database pools, the platform apps, the agent, the processor (River), the
// ingester and the HTTP server, each constructed once, in dependency order,
// from what was built before it. Commands (`weft serve`, `weft thread
// create`, a demo, a benchmark's server) call New and then Run or Work.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/mcpclient"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/processor"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
)

// App is weft, built: what `weft serve` runs, and what `thread create`
// works a thread with.
type App struct {
	cfg    *Config
	logger *slog.Logger
	// pool is the processor's; intakePool is for webhooks, the gateway and
	// the API, so that however many turns are queued an inbound event
	// finds a connection.
	pool, intakePool *pgxpool.Pool
	store, intake    *db.Store
	// directPool is River's, on WEFT_DATABASE_DIRECT_URL when DATABASE_URL
	// goes through a pooler; nil otherwise (River uses pool).
	directPool *pgxpool.Pool

	linear  *surfacelinear.App
	discord *surfacediscord.App
	slack   *surfaceslack.App
	// platforms are the three above and GitHub, in the order their doors are logged,
	// their workers started and stopped.
	platforms []surface.Platform
	// slackOAuth is the Slack install flow, slackTokens its workspaces'
	// bot tokens; both nil without SLACK_CLIENT_ID.
	slackOAuth  *surfaceslack.OAuth
	slackTokens *surfaceslack.Installations
	proc        *processor.Processor
	// express sends acknowledgements as they commit, ahead of the queue.
	express *processor.Express
	ingest  *ingest.Ingester
	// telemetry is the registry /metrics exports, with weft's series, and
	// the tracer provider.
	telemetry *telemetry
	// mcpTools are the MCP servers' tools (WEFT_MCP_CONFIG); nil without.
	mcpTools *mcpclient.Manager
	// approvals decides requests for approval, from every surface.
	approvals *approval.Decider
	// handler is the HTTP surface; nil on a worker.
	handler http.Handler
	// admitted bounds the webhooks worked at once; turns yield to it.
	admitted *admission.Intake
	// observer is WEFT_METRICS_ADDR's readiness (observe.go).
	observer observer
}

// While the intake is pressed, the turns that start halve every
// turnGateInterval down to a twentieth of WEFT_TURN_WORKERS (5 of 100), so
// that queued turns still move; they grow back by a tenth an interval.
const (
	turnFloorShare   = 20
	turnGateInterval = 100 * time.Millisecond
)

// maxConns bounds the HTTP connections open at once: past it, a new one is
// answered 503 at once and closed (admission.LimitConns), which bounds the
// memory and the header reads of a replica flooded with connections.
const maxConns = 2048

// expressSends bounds the acknowledgements sent at once, outside the job
// queue; past it they wait for the reclaim to hand them to delivery jobs.
const expressSends = 64

// New connects to the database, applies pending migrations and builds
// weft. Inbound events are written through the intake pool, and so are the
// express sends of their acknowledgements (one statement each, since they
// take no claim), so that a backlog of turns never holds the connections an
// acknowledgement needs. With cfg.Role "api" the processor only enqueues.
// Nothing runs until Run or Work; Close releases what New opened.
func New(ctx context.Context, cfg *Config, logger *slog.Logger) (_ *App, err error) {
	a := &App{cfg: cfg, logger: logger}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.store, a.pool, err = OpenMigrated(ctx, cfg, logger); err != nil {
		return nil, err
	}
	if a.intake, a.intakePool, err = Open(ctx, cfg.intakeDB(), logger); err != nil {
		return nil, err
	}
	if a.linear, err = surfacelinear.New(cfg.Linear, a.store, logger); err != nil {
		return nil, err
	}
	if a.discord, err = surfacediscord.New(cfg.Discord, a.store, logger); err != nil {
		return nil, err
	}
	if a.slackOAuth, a.slackTokens, err = newSlackOAuth(cfg.SlackInstall, a.store, logger); err != nil {
		return nil, err
	}
	if a.slack, err = surfaceslack.New(cfg.Slack, a.store, a.slackTokens, logger); err != nil {
		return nil, err
	}
	github, err := surfacegithub.New(cfg.GitHub, a.store, logger)
	if err != nil {
		return nil, err
	}
	a.platforms = []surface.Platform{a.linear, a.discord, a.slack, github}
	if a.telemetry, err = newTelemetry(ctx, cfg, a.intake, logger); err != nil {
		return nil, err
	}
	for _, p := range a.platforms {
		if c, ok := p.(metrics.Collected); ok {
			if err := metrics.Register(a.telemetry.registry, c.Collectors()...); err != nil {
				return nil, err
			}
		}
	}
	rep, err := newReplies(a.store, a.discord, a.slack, a.telemetry.registry, logger)
	if err != nil {
		return nil, err
	}
	// Continuing in Discord or Slack records through an ingester of its
	// own, on an insert-only River client: the agent's tools,
	// continue_in_discord and continue_in_slack among them, exist before
	// the processor that runs them, and a continuation's posts need no
	// express send.
	jobs, err := river.NewClient(riverpgxv5.New(a.intakePool), &river.Config{Logger: logger.With("component", "river_insert")})
	if err != nil {
		return nil, fmt.Errorf("river insert client: %w", err)
	}
	rec := ingest.New(ingest.Deps{Store: a.intake, Jobs: jobs, Logger: logger})
	var refs []continuation.Resolver
	var origins []continuation.Originator
	for _, p := range a.platforms {
		if r, ok := p.(surface.Resolving); ok {
			refs = append(refs, r)
		}
		if o, ok := p.(surface.Originating); ok {
			origins = append(origins, o)
		}
	}
	continuers := continuers{
		discord: a.discord.Continuer(a.store, rec, refs, origins),
		slack:   a.slack.Continuer(a.store, rec, refs, origins),
		github:  github.Continuer(a.store, rec, refs, origins),
	}
	workers := cfg.Role != "api"
	var runner *agent.Runner
	if workers {
		if runner, err = newRunner(cfg, logger, a.store, a.platforms, a.linear, a.discord, a.slack, rep, continuers, a.telemetry); err != nil {
			return nil, err
		}
		runner.Approvals = replyDecider{a}
		if cfg.MCP != nil {
			a.mcpTools = mcpclient.New(mcpclient.Deps{Config: cfg.MCP, Logger: logger.With("component", "mcp_client")})
			runner.Tools.AddSource(a.mcpTools.Tools)
		}
	}
	senders := map[thread.Platform]processor.Sender{}
	var hooks []surface.TurnHook
	var adders []func(*river.Workers)
	var sweeps []processor.Sweep
	for _, p := range a.platforms {
		if w, ok := p.(workerAdder); ok {
			adders = append(adders, w.AddWorkers)
		}
		if s, ok := p.(sweeper); ok {
			sweeps = append(sweeps, s.Sweep())
		}
		if s, ok := p.(surface.Sending); ok && s.Sender() != nil {
			senders[p.Name()] = sender(s, cfg.Stream)
		}
		if h, ok := p.(surface.Hooking); ok {
			hooks = append(hooks, h.OnTurn())
		}
	}
	// Requests for approval left unanswered are denied by the leader's
	// sweep; the decider is made once the processor can enqueue.
	sweeps = append(sweeps, processor.Sweep{Name: "approvals", Run: func(ctx context.Context) (int64, error) {
		return a.approvals.Expire(ctx)
	}})
	if c := github.PromptContext(a.store); c != nil && runner != nil {
		runner.Context = append(runner.Context, c)
	}
	a.admitted = admission.NewIntake(webhook.DefaultIntakeLimit, webhook.IntakeSlow)
	var gate processor.Gate
	if cfg.Role == "all" {
		// Turns yield to this replica's intake; a worker has none.
		gate = admission.NewTurns(admission.TurnsDeps{Intake: a.admitted, Max: cfg.TurnWorkers,
			Floor: max(1, cfg.TurnWorkers/turnFloorShare), Interval: turnGateInterval})
	}
	// River's LISTEN/NOTIFY and leader election need a session: behind a
	// transaction pooler they take the direct connection, or without one
	// River polls (FetchPollInterval).
	riverPool := a.store.Pool()
	if cfg.DatabaseDirectURL != "" {
		if _, a.directPool, err = OpenDirect(ctx, cfg, cfg.DBConns, logger); err != nil {
			return nil, err
		}
		riverPool = a.directPool
	}
	a.proc, err = processor.New(processor.Deps{Pool: riverPool, Store: a.store, Runner: runner, Senders: senders, Logger: logger, Config: processor.Config{
		Workers: workers, TurnWorkers: cfg.TurnWorkers, Gate: gate, LeaseTTL: cfg.LeaseTTL, SweepInterval: cfg.SweepInterval, TurnTimeout: cfg.TurnTimeout,
		OnTurn: turnHooks(hooks...), Metrics: a.telemetry.metrics, Tracer: a.telemetry.tracer,
		Echo: cfg.Echo, Observer: cfg.Observer,
		PollOnly: cfg.DatabasePooler == "transaction" && cfg.DatabaseDirectURL == "",
		AddWorkers: func(w *river.Workers) {
			for _, add := range adders {
				add(w)
			}
		},
		Sweeps: sweeps,
	}})
	if err != nil {
		return nil, err
	}
	a.approvals = &approval.Decider{Store: a.intake, Jobs: a.proc.Inserter(), Approvers: cfg.Approvers,
		Logger: logger.With("component", "approval"), OnDecided: a.showDecided}
	for _, p := range a.platforms {
		if ap, ok := p.(surface.Approving); ok {
			ap.DecideThrough(a.approvals)
		}
	}
	a.express = a.proc.Express(a.intake, expressSends)
	a.ingest = ingest.New(ingest.Deps{Store: a.intake, Jobs: a.proc.Inserter(), Express: a.express, Logger: logger, Persona: cfg.Persona})
	a.discord.Elect(a.intake, a.ingest, a.telemetry.metrics, a.telemetry.tracer)
	// Slack's block actions by action_id prefix: a feature's buttons are
	// registered here (ListenDeps.Actions), beside Slack's own feedback.
	a.slack.Listen(surfaceslack.ListenDeps{Recorder: a.ingest, Allowed: cfg.SlackInstall.TeamAllowed,
		Continuer: continuers.slack, Aborter: a.ingest})
	if cfg.Role != "worker" {
		a.handler = a.newHandler(rep, continuers)
	}
	return a, nil
}

// Store is the processor's store; Ingester writes inbound events.
func (a *App) Store() *db.Store { return a.store }

// Ingester writes inbound events: threads started by a command go in
// through it, as every other event does.
func (a *App) Ingester() *ingest.Ingester { return a.ingest }

// Handler is weft's HTTP surface, as Run serves it (nil on a worker): for
// a benchmark timing its pages in process.
func (a *App) Handler() http.Handler { return a.handler }

// Work starts working jobs, without the doors (no HTTP, no Discord
// gateway): how `weft thread create` runs its thread here. Stop ends it.
func (a *App) Work(ctx context.Context) error { return a.proc.Start(ctx) }

// Run runs weft until ctx ends (SIGINT or SIGTERM), then stops in reverse
// order of starting: the HTTP server drains, the Discord gateway lets its
// shards go, the processor finishes or releases its turns, then the pools
// close. A worker serves no HTTP.
func (a *App) Run(ctx context.Context) error {
	defer a.Close()
	a.logDoors(ctx)
	_, stopDebug, err := a.serveDebug(ctx)
	if err != nil {
		return fmt.Errorf("listen WEFT_DEBUG_ADDR: %w", err)
	}
	defer stopDebug()
	_, stopMetrics, err := a.serveMetrics(ctx)
	if err != nil {
		return fmt.Errorf("listen WEFT_METRICS_ADDR: %w", err)
	}
	defer stopMetrics()
	if err := a.proc.Start(ctx); err != nil {
		return err
	}
	if a.mcpTools != nil {
		go a.mcpTools.Run(ctx)
	}
	for _, p := range a.platforms {
		if r, ok := p.(surface.Running); ok {
			if err := r.Start(ctx); err != nil {
				return errors.Join(err, a.Stop(ctx))
			}
		}
	}
	a.observer.ready.Store(true)
	if a.handler == nil {
		a.logger.InfoContext(ctx, "weft working jobs (no HTTP)", slog.String("role", a.cfg.Role))
		<-ctx.Done()
		return a.Stop(ctx)
	}
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute, // keep-alive connections left idle
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },

		// Webhooks and API calls carry a few headers: the default 1 MB
		// per connection would let maxConns of them hold gigabytes.
		MaxHeaderBytes: 64 << 10,
	}
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), a.Stop(ctx))
	}
	a.logger.InfoContext(ctx, "weft serving", slog.String("addr", ln.Addr().String()), slog.String("role", a.cfg.Role))
	ln = admission.LimitConns(ln, maxConns)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return errors.Join(fmt.Errorf("http server: %w", err), a.Stop(ctx))
	case <-ctx.Done():
	}

	a.observer.ready.Store(false)
	a.logger.InfoContext(ctx, "shutting down", slog.Duration("timeout", a.cfg.ShutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return errors.Join(fmt.Errorf("http shutdown: %w", err), a.Stop(ctx))
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errors.Join(fmt.Errorf("http server: %w", err), a.Stop(ctx))
	}
	if err := a.Stop(ctx); err != nil {
		return err
	}
	a.logger.InfoContext(ctx, "stopped")
	return nil
}

// Stop drains the processor within the shutdown timeout, then cancels what
// is left.
func (a *App) Stop(ctx context.Context) error {
	a.observer.ready.Store(false)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	// The platforms' workers first (Discord's gateway, Slack's Socket
	// Mode): their events enqueue turns the processor should see.
	for _, p := range a.platforms {
		if r, ok := p.(surface.Running); ok {
			if err := r.Stop(stopCtx); err != nil {
				a.logger.WarnContext(ctx, "stop "+string(p.Name()), slog.Any("error", err))
			}
		}
	}
	a.express.Wait()
	if err := a.proc.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop processor: %w", err)
	}
	a.logger.InfoContext(ctx, "processor stopped")
	if err := a.telemetry.shutdown(stopCtx); err != nil {
		a.logger.WarnContext(ctx, "flush traces", slog.Any("error", err))
	}
	return nil
}

// Close closes the pools. Run closes them itself.
func (a *App) Close() {
	for _, p := range []*pgxpool.Pool{a.intakePool, a.directPool, a.pool} {
		if p != nil {
			p.Close()
		}
	}
}

// workerAdder is a platform with job workers of its own, registered on the
// processor's River client.
type workerAdder interface {
	AddWorkers(*river.Workers)
}

// sweeper is a platform with upkeep of its own for the processor's sweep.
type sweeper interface {
	Sweep() processor.Sweep
}

// The platforms' capabilities, found by type assertion in New, Run and
// Stop: checked here so that a renamed method cannot drop one silently.
var (
	_ surface.Sending = (*surfacelinear.App)(nil)
	_ surface.Routed  = (*surfacelinear.App)(nil)
	_ workerAdder     = (*surfacelinear.App)(nil)
	_ sweeper         = (*surfacelinear.App)(nil)
	_ surface.Sending = (*surfacediscord.App)(nil)
	_ surface.Hooking = (*surfacediscord.App)(nil)
	_ surface.Routed  = (*surfacediscord.App)(nil)
	_ surface.Running = (*surfacediscord.App)(nil)
	_ surface.Sending = (*surfaceslack.App)(nil)
	_ surface.Hooking = (*surfaceslack.App)(nil)
	_ surface.Routed  = (*surfaceslack.App)(nil)
	_ surface.Running = (*surfaceslack.App)(nil)
	_ surface.Sending = (*surfacegithub.App)(nil)
	_ surface.Routed  = (*surfacegithub.App)(nil)
)

// turnHooks runs several processor turn hooks as one.
func turnHooks(hooks ...surface.TurnHook) func(context.Context, uuid.UUID) func() {
	var on []surface.TurnHook
	for _, h := range hooks {
		if h != nil {
			on = append(on, h)
		}
	}
	if len(on) == 0 {
		return nil
	}
	return func(ctx context.Context, id uuid.UUID) func() {
		stops := make([]func(), len(on))
		for i, h := range on {
			stops[i] = h(ctx, id)
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
}

// replyDecider decides requests for approval from people's replies in the
// conversation (agent.ApprovalDecider), through the decider every other
// surface uses: made after the runner, once the processor can enqueue.
type replyDecider struct{ a *App }

func (r replyDecider) DecideReply(ctx context.Context, d agent.ReplyDecision) (*thread.Approval, error) {
	who := approval.Who{Via: string(d.Via)}
	if d.By != nil {
		who.ID, who.Name = d.By.ID, d.By.Name
	}
	if d.Via == "" || d.Via == thread.PlatformAPI || d.Via == thread.PlatformCLI {
		// Input from the API or the CLI comes from their operator.
		who.Via = approval.ViaAPI
		who.ID, who.Name = cmp.Or(who.ID, string(cmp.Or(d.Via, thread.PlatformAPI))), cmp.Or(who.Name, "the API")
	}
	return r.a.approvals.Decide(ctx, approval.Request{ApprovalID: d.ApprovalID, Decision: d.Decision, Reason: d.Reason, By: who})
}

// showDecidedTimeout bounds the rewrite of a decided request's posts.
const showDecidedTimeout = 30 * time.Second

// showDecided rewrites, on every platform, weft's posts of a request just decided, to say who decided and drop
// their buttons (surface.ShowingDecisions). It runs after the decision is
// stored, past the request that made it: best effort, logged, never
// holding the decision's acknowledgement. A post not sent yet goes out
// with its buttons, and a click on them is told who decided.
func (a *App) showDecided(ctx context.Context, ap *thread.Approval) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), showDecidedTimeout)
	go func() {
		defer cancel()
		rows, err := a.store.ThreadOutbox(ctx, ap.ThreadID)
		if err != nil {
			a.logger.WarnContext(ctx, "approval posts not read", slog.String("approval_id", ap.ID.String()), slog.Any("error", err))
			return
		}
		for _, row := range rows {
			// The platform it was decided on too: a reply decides as well
			// as a click, and a click's own update is the same text.
			if row.StitchID != ap.ID || row.Kind != thread.OutboxElicitation || row.Status != thread.OutboxSent {
				continue
			}
			for _, p := range a.platforms {
				show, ok := p.(surface.ShowingDecisions)
				if !ok || p.Name() != row.Platform {
					continue
				}
				if err := show.ShowDecided(ctx, row, ap); err != nil {
					a.logger.WarnContext(ctx, "approval post not updated", slog.String("approval_id", ap.ID.String()),
						slog.String("platform", string(row.Platform)), slog.Any("error", err))
				}
			}
		}
	}()
}
