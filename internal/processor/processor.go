// Package processor is weft's durable background work on River: the turn
// worker (one agent turn per thread at a time, across replicas, under a
// lease with a heartbeat), the delivery worker (the outbox, sent through a
// Sender per platform), and the sweeper that finds work a crash left behind.
package processor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Sender posts one outbox row on its platform. The row's ID is the
// idempotency key: sending the same row twice must post once (the
// platform's activity id or message nonce). It returns the platform's id for the post.
type Sender interface {
	Send(ctx context.Context, o thread.Outbox) (externalID string, err error)
}

// Config is the processor's settings. Zero values take the defaults.
type Config struct {
	// Workers is false for an API-only replica: it enqueues, never works.
	Workers bool
	// TurnWorkers and DeliveryWorkers size the two queues. A turn spends
	// most of its time waiting on the model and holds no connection then, so
	// many run at once cheaply; too few, and messages queue behind slow models.
	TurnWorkers     int
	DeliveryWorkers int
	// LeaseTTL is how long a turn's lease outlives its last heartbeat: after
	// a crash, another replica may take the thread this much later. It is
	// also how long a sender holds an outbox row it is sending, longer than
	// any one send; a platform's idempotency key covers a send that outlives
	// it.
	LeaseTTL time.Duration
	// Heartbeat is how often a running turn looks for an abort; it renews
	// its lease every third of LeaseTTL.
	Heartbeat time.Duration
	// TurnTimeout bounds one attempt of a turn: River cancels the attempt
	// past it, and the next resumes from the chain. River also takes it as
	// the age at which a turn job left running by a replica that died is
	// retried; the sweep resumes such turns well before (stuckTurnGrace).
	TurnTimeout time.Duration
	// LeaseWait is the least a turn that finds its thread busy waits before
	// trying again; it waits until the busy turn's lease would lapse, up to
	// 5 s (the running turn answers the new input itself, unless it dies).
	LeaseWait time.Duration
	// SweepInterval is how often the leader looks for stranded work.
	SweepInterval time.Duration
	// ReclaimInterval is how often the leader hands outbox rows whose
	// claim lapsed unsent to delivery jobs, and threads whose turn lease
	// lapsed to turn jobs (job.Reclaim): with express's 2 s claim, an
	// acknowledgement express could not send reaches the platform within
	// about 2 s plus this, and a dead replica's turn resumes within about
	// LeaseTTL plus this.
	ReclaimInterval time.Duration
	// DeliveryBackoff is the first retry delay of a failed send; it doubles.
	DeliveryBackoff time.Duration
	// TurnBackoff is the first retry delay of a failed turn; it doubles.
	TurnBackoff time.Duration
	// FetchPollInterval bounds how long a job that became due without a
	// notification waits: a snoozed turn whose thread was busy, a delivery
	// that waited its turn. New jobs wake workers at once through
	// LISTEN/NOTIFY; these would otherwise wait up to River's default 1 s.
	FetchPollInterval time.Duration
	// NotifyCooldown is the least time between two of this replica's
	// insert notifications for a queue: every notifying commit takes a
	// database-wide lock in Postgres, so a notification per insert would
	// serialize the commits of a busy intake. A job inserted within the
	// cooldown of a notified one is picked up by the next notified insert
	// or poll.
	NotifyCooldown time.Duration
	// Metrics counts turns, sends and sweeps; nil counts nothing.
	Metrics *metrics.Metrics
	// Tracer traces jobs that an event's trace enqueued (tracing.Middleware)
	// and their posts; nil traces nothing.
	Tracer trace.TracerProvider
	// Observer, if set, is told when turns start and finish (benchmarks).
	Observer Observer
	// Gate, when set, admits turns: a turn waits for its slot before it
	// reads its thread, so that the intake keeps its latency while turns
	// run (admission.Turns). nil admits every turn River hands out.
	Gate Gate
	// OnTurn, when set, is called once a turn has its lease and input to
	// answer, with the turn's context; the func it returns is called as the
	// turn ends. A platform's typing indicator hangs on it.
	OnTurn func(ctx context.Context, threadID uuid.UUID) (done func())
	// Echo is what a thread's other surfaces hear of an answer; the zero
	// value echoes nothing.
	Echo outbox.Echo
	// PollOnly runs River without LISTEN (River's poll-only mode), for a
	// pool behind a transaction pooler: new jobs are found within
	// FetchPollInterval, a lost leader is replaced within seconds.
	PollOnly bool
	// AddWorkers, when set, registers the platforms' own job workers (a
	// platform's follow-up jobs on a new thread) beside the processor's.
	AddWorkers func(*river.Workers)
	// Sweeps are the platforms' own upkeep, run by each sweep after weft's.
	Sweeps []Sweep
}

// Sweep is upkeep a platform needs done periodically on the leader (its
// conversations marked as the platform itself shows them). Run returns
// how many rows it changed, which the sweep logs under Name.
type Sweep struct {
	Name string
	Run  func(ctx context.Context) (int64, error)
}

// Gate admits turns; release gives the slot back.
type Gate interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// fetchCooldown is the least time between two fetches of a queue: River's
// minimum, so a worker that finishes a job fetches the next at once.
const fetchCooldown = river.FetchCooldownMin

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&c.LeaseTTL, 30*time.Second)
	set(&c.Heartbeat, time.Second)
	set(&c.TurnTimeout, 30*time.Minute)
	set(&c.LeaseWait, 250*time.Millisecond)
	set(&c.SweepInterval, 15*time.Second)
	set(&c.ReclaimInterval, time.Second)
	set(&c.DeliveryBackoff, time.Second)
	set(&c.TurnBackoff, 2*time.Second)
	set(&c.FetchPollInterval, 100*time.Millisecond)
	set(&c.NotifyCooldown, 10*time.Millisecond)
	if c.TurnWorkers == 0 {
		c.TurnWorkers = 100
	}
	if c.DeliveryWorkers == 0 {
		c.DeliveryWorkers = 50
	}
}

// Processor owns the River client and its workers.
type Processor struct {
	cfg     Config
	store   *db.Store
	runner  *agent.Runner
	senders map[thread.Platform]Sender
	logger  *slog.Logger
	client  *river.Client[pgx.Tx]
	tracer  trace.Tracer
	// id names this process in lease owners, so ops can see who holds what.
	id string
	// cancelling is set when Stop cancels the jobs still running: a turn
	// or send cut short then hands its thread or row to another replica at
	// once (handTurnOver, handRowOver) instead of failing an attempt.
	cancelling atomic.Bool
	heartbeat  *heartbeat
}

// Deps is what a Processor is built from.
type Deps struct {
	// Pool is River's: a direct connection, or a session pooler.
	Pool  *pgxpool.Pool
	Store *db.Store
	// Runner works turns and Senders deliver outbox rows, by platform;
	// both may be nil on an API-only replica.
	Runner  *agent.Runner
	Senders map[thread.Platform]Sender
	Config  Config
	Logger  *slog.Logger
}

// New builds the processor.
func New(d Deps) (*Processor, error) {
	pool, store, runner, senders, cfg, logger := d.Pool, d.Store, d.Runner, d.Senders, d.Config, d.Logger
	cfg.defaults()
	host, _ := os.Hostname()
	p := &Processor{
		cfg: cfg, store: store, runner: runner, senders: senders,
		logger: logger.With("component", "processor"), tracer: tracing.Tracer(cfg.Tracer),
		id: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8]),
	}
	p.heartbeat = &heartbeat{p: p, turns: map[db.TurnLease]*beat{}}
	rc := &river.Config{
		Logger: logger.With("component", "river"),
		// A job of a replica that died stays "running" in River until the
		// rescuer retries or discards it, once it is older than this and
		// than its kind's timeout: River's default minute for every kind
		// but turns (TurnTimeout). Without a timeout River never rescues a
		// job, and a sweep or reclaim left running would, being unique,
		// keep every later one out.
		RescueStuckJobsAfter: 2 * time.Minute,
		FetchPollInterval:    cfg.FetchPollInterval,
		// River's cooldown is both the notification limit and each
		// queue's least time between fetches; the queues set their own
		// (fetchCooldown), so one worker is not held to a fetch per
		// NotifyCooldown.
		FetchCooldown: cfg.NotifyCooldown,
		PollOnly:      cfg.PollOnly,
		// A job carries the trace of the work that enqueued it.
		Middleware: []rivertype.Middleware{tracing.NewMiddleware(cfg.Tracer)},
	}
	if cfg.Workers {
		workers := river.NewWorkers()
		river.AddWorker(workers, &turnWorker{p: p})
		river.AddWorker(workers, &deliveryWorker{p: p})
		river.AddWorker(workers, &sweepWorker{p: p})
		river.AddWorker(workers, &reclaimWorker{p: p})
		river.AddWorker(workers, &echoSummaryWorker{p: p})
		if cfg.AddWorkers != nil {
			cfg.AddWorkers(workers)
		}
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{
			job.QueueTurns:      {MaxWorkers: cfg.TurnWorkers, FetchCooldown: fetchCooldown},
			job.QueueDeliveries: {MaxWorkers: cfg.DeliveryWorkers, FetchCooldown: fetchCooldown},
		}
		rc.PeriodicJobs = []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(cfg.SweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return job.Sweep{}, job.Periodic(cfg.SweepInterval) },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(cfg.ReclaimInterval),
				func() (river.JobArgs, *river.InsertOpts) { return job.Reclaim{}, job.Periodic(cfg.ReclaimInterval) },
				&river.PeriodicJobOpts{RunOnStart: true}),
		}
	}
	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	p.client = client
	return p, nil
}

// Inserter enqueues jobs in a caller's transaction.
func (p *Processor) Inserter() job.Inserter { return p.client }

// Start starts working jobs (a no-op on an API-only replica). Work goes on
// after ctx ends, until Stop: cancelling River's start context would cancel
// in-flight turns at once, where a SIGTERM should let them drain.
func (p *Processor) Start(ctx context.Context) error {
	if !p.cfg.Workers {
		return nil
	}
	if err := p.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels them: a
// cancelled turn releases its lease with a new job for its thread, and a
// cancelled send releases its row with a new job for it, both due at once,
// so another replica carries on without waiting for a lease to lapse or a
// retry's backoff. A job that outlives the cancel too leaves its lease or
// claim to lapse.
func (p *Processor) Stop(ctx context.Context) error {
	if !p.cfg.Workers {
		return nil
	}
	err := p.client.Stop(ctx)
	if err == nil {
		return nil
	}
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	p.cancelling.Store(true)
	if cerr := p.client.StopAndCancel(cancelCtx); cerr != nil {
		return fmt.Errorf("stop river: %w", cerr)
	}
	return nil
}
