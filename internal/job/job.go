// Package job holds the River job argument types weft enqueues and the
// Inserter that enqueues them. A job's Kind is persisted in river_job rows,
// so a Kind is never renamed.
package job

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Inserter enqueues jobs in a caller's transaction: exactly the method of
// *river.Client[pgx.Tx] that writers need, so a job is committed with the
// write that causes it, or not at all.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// InsertTx enqueues every job of args in tx with one insert: a write that
// causes several jobs (a turn and a delivery) pays one round trip for them.
func InsertTx(ctx context.Context, ins Inserter, tx pgx.Tx, args ...river.JobArgs) error {
	if len(args) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a}
	}
	_, err := ins.InsertManyTx(ctx, tx, params)
	return err
}

// Queues weft works.
const (
	// QueueTurns runs agent turns: long (LLM calls take seconds), few at once.
	QueueTurns = "turns"
	// QueueDeliveries sends outbox rows: short, many at once.
	QueueDeliveries = "deliveries"
)

// Turn asks for an agent turn on a thread: answer whatever input it has not
// answered yet. Enqueued with every input; extra turns find nothing to do.
type Turn struct {
	ThreadID uuid.UUID `json:"thread_id"`
}

// Kind implements river.JobArgs.
func (Turn) Kind() string { return "weft_turn" }

// InsertOpts puts turns on their own queue.
func (Turn) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTurns, MaxAttempts: TurnMaxAttempts}
}

// TurnMaxAttempts bounds retries of a turn that keeps failing (a poison
// thread); the last attempt records the failure on the thread.
const TurnMaxAttempts = 5

// Delivery asks for one outbox row to be sent.
type Delivery struct {
	OutboxID uuid.UUID `json:"outbox_id"`
	ThreadID uuid.UUID `json:"thread_id"`
}

// Kind implements river.JobArgs.
func (Delivery) Kind() string { return "weft_delivery" }

// InsertOpts puts deliveries on their own queue, at a priority below the
// sweep's and the reclaim's, which a backlog of deliveries would otherwise
// hold up.
func (Delivery) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries, MaxAttempts: DeliveryMaxAttempts, Priority: deliveryPriority}
}

// deliveryPriority is River's 2: 1, the default, is the first fetched.
const deliveryPriority = 2

// DeliveryMaxAttempts is how often a send is tried before the outbox row is
// failed and an error stitch recorded.
const DeliveryMaxAttempts = 8

// Sweep looks for work a crash left behind: turn jobs a dead replica left
// running before they took their thread's lease, and outbox rows no job is
// sending. Run periodically by the leader.
type Sweep struct{}

// Kind implements river.JobArgs.
func (Sweep) Kind() string { return "weft_sweep" }

// InsertOpts makes sweeps unique while queued, so a backlog never builds.
func (Sweep) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries, MaxAttempts: 1, UniqueOpts: uniqueWhileQueued()}
}

// Reclaim hands outbox rows whose sender's claim lapsed to delivery jobs
// (an acknowledgement written for an express send that did not happen: no
// slot free, or the process died), and running threads whose turn lease
// lapsed to turn jobs. Run every second or so by the leader, it finds
// nothing on a healthy replica.
type Reclaim struct{}

// Kind implements river.JobArgs.
func (Reclaim) Kind() string { return "weft_reclaim" }

// InsertOpts makes reclaims unique while queued, like sweeps.
func (Reclaim) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries, MaxAttempts: 1, UniqueOpts: uniqueWhileQueued()}
}

// Periodic are the insert options of a periodic job (Sweep, Reclaim) run
// every interval: one at a time, queued or running, within a period of
// the interval (River's least, a second, at minimum). Unique across
// periods, a job left running by a replica that died would keep every
// later one out until River's rescuer ended it, minutes later, and with
// it the recovery of that replica's turns and deliveries.
func Periodic(interval time.Duration) *river.InsertOpts {
	u := uniqueWhileQueued()
	u.ByPeriod = max(interval, time.Second)
	return &river.InsertOpts{UniqueOpts: u}
}

// uniqueWhileQueued allows one job of a kind at a time, queued or running.
// River's default states include completed, which would keep a periodic
// job from being enqueued again until the finished one is cleaned out, a
// day later.
func uniqueWhileQueued() river.UniqueOpts {
	return river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled,
	}}
}

// EchoSummary asks for a summary of a thread's conversation to be posted on
// one of its surfaces once the conversation has gone idle: scheduled with
// each answer for the surfaces whose echo policy is summary, it posts
// nothing if input arrived after After (the newer answer's job will).
type EchoSummary struct {
	ThreadID uuid.UUID `json:"thread_id"`
	Platform string    `json:"platform"`
	Target   string    `json:"target"`
	// After is the chain's length once the answer was recorded.
	After int64 `json:"after"`
}

// Kind implements river.JobArgs.
func (EchoSummary) Kind() string { return "weft_echo_summary" }

// InsertOpts puts it on the deliveries queue: a short write.
func (EchoSummary) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries, MaxAttempts: DeliveryMaxAttempts}
}
