package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Texts weft posts into a Linear session on its own, before any turn.
const (
	// LinearAck is the thought that acknowledges a new session at once:
	// Linear marks a session unresponsive without an activity within 10 s,
	// and a turn's first LLM call may take longer than that.
	LinearAck = "Looking into it…"
	// LinearStopped confirms a user's stop request, as Linear requires.
	LinearStopped = "Stopped. I won't do anything more here until you ask again."
)

// LinearSession is a Linear agent session as a webhook describes it, in
// weft's terms: what a new thread is attached to and starts from. Both
// created and prompted events carry it, so whichever arrives first can make
// the session's thread.
type LinearSession struct {
	// Attachment ties the thread to the session. SessionID, WorkspaceID and
	// CreatedByUserID are required.
	Attachment thread.LinearAttachment
	// Goal is what the thread is for, e.g. the issue's identifier and title.
	Goal string
	// Prompt is the thread's initial prompt: Linear's prompt context (issue,
	// comment thread, guidance) or its rendering from the payload.
	Prompt string
	// Creator started the session; nil for an automation.
	Creator *thread.Author
	// StartIssue asks for the issue to be moved to started: a person
	// delegated it to the agent. Done by a job, off the webhook's path.
	StartIssue bool
}

// LinearPrompt is a user's message in a session (a prompted event).
type LinearPrompt struct {
	// ActivityID is the prompt activity's id: the stitch's external id.
	ActivityID string
	Text       string
	Author     *thread.Author
	// Stop is the user's stop request: the thread is aborted, not answered.
	Stop bool
}

// LinearResult is what ingesting a Linear delivery did.
type LinearResult struct {
	// Duplicate is true for a redelivery (same delivery id, or same event
	// under a new one): nothing was written.
	Duplicate bool
	// ThreadID is the session's thread; uuid.Nil for events about no
	// session, and for duplicates.
	ThreadID uuid.UUID
}

// LinearCreated ingests a created event (the agent was mentioned or
// delegated): in one transaction, the ledger entry, the session's thread
// with its initial prompt, an acknowledging thought for Linear and a turn.
// When a prompted event of the same session got there first and made the
// thread already, it only records the delivery: the thread ends as it would
// have in order.
func (in *Ingester) LinearCreated(ctx context.Context, d thread.Inbound, s LinearSession) (LinearResult, error) {
	draft, err := in.linearDraft(ctx, s)
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear created: %w", err)
	}
	// The usual case, a new session: in one round trip for the writes and
	// one for the jobs, shared with the other new sessions of a burst.
	d = linearInbound(d, thread.InboundProcessed)
	o := &opening{ctx: ctx, d: d, s: s, draft: draft}
	in.openings.do(o)
	switch err = o.err; {
	case err == nil:
		return LinearResult{ThreadID: o.th.ID}, nil
	case errors.Is(err, thread.ErrDuplicateDelivery):
		return LinearResult{Duplicate: true}, nil
	case !errors.Is(err, thread.ErrLinearSessionAttached):
		return LinearResult{}, fmt.Errorf("ingest linear created: %w", err)
	}
	// The session's prompted event got there first and made its thread:
	// only the delivery is recorded, linked to that thread.
	var res LinearResult
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.ThreadByLinearSession(ctx, s.Attachment.SessionID)
		if err != nil {
			return err
		}
		d.ThreadID = th.ID
		fresh, err := tx.RecordInbound(ctx, d)
		res = LinearResult{Duplicate: !fresh}
		if fresh {
			res.ThreadID = th.ID
		}
		return err
	})
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear created: %w", err)
	}
	return res, nil
}

// LinearPrompted ingests a prompted event in one transaction: the ledger
// entry, then the user's message as a linear_activity stitch and a turn
// (which reopens a completed or waiting thread), or, for a stop request,
// the abort with a final response confirming it. A prompt that arrives
// before its session's created event makes the session's thread first,
// from the session the prompt's payload carries.
func (in *Ingester) LinearPrompted(ctx context.Context, d thread.Inbound, s LinearSession, p LinearPrompt) (LinearResult, error) {
	draft, err := in.linearDraft(ctx, s)
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear prompted: %w", err)
	}
	var res LinearResult
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if fresh, err := tx.RecordInbound(ctx, linearInbound(d, thread.InboundProcessed)); err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		// A stop that opens a session needs no acknowledgement: its
		// confirming response is the first activity.
		th, made, err := in.linearThread(ctx, tx, s, draft, !p.Stop)
		if err != nil {
			return err
		}
		res.ThreadID = th.ID
		if err := tx.SetInboundThread(ctx, thread.PlatformLinear, d.DeliveryID, th.ID.String()); err != nil {
			return err
		}
		input := thread.Stitch{
			Type: thread.StitchLinearActivity, Content: p.Text,
			Source: thread.PlatformLinear, ExternalID: p.ActivityID, Author: p.Author,
			Metadata: tracing.Stamp(ctx, nil),
		}
		if p.Stop {
			return in.stopLinear(ctx, tx, th.ID, input)
		}
		input.ThreadID = th.ID
		if _, err := tx.AppendStitch(ctx, input); err != nil {
			return err
		}
		if err := tx.SetLinearSessionStatus(ctx, s.Attachment.SessionID, thread.SessionActive); err != nil {
			return err
		}
		if made {
			return nil // the new thread's turn answers this input too
		}
		return in.enqueueTurn(ctx, tx, th.ID)
	})
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear prompted: %w", err)
	}
	return res, nil
}

// LinearRevoked ingests an OAuthApp revoked event: the workspace uninstalled
// the app, so its installation is deactivated with the ledger entry.
func (in *Ingester) LinearRevoked(ctx context.Context, d thread.Inbound, organizationID string) (LinearResult, error) {
	var res LinearResult
	err := in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if fresh, err := tx.RecordInbound(ctx, linearInbound(d, thread.InboundProcessed)); err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		deactivated, err := tx.DeactivateLinearInstallation(ctx, organizationID)
		if err != nil {
			return err
		}
		in.logger.InfoContext(ctx, "linear installation revoked",
			slog.String("organization_id", organizationID), slog.Bool("was_active", deactivated))
		return nil
	})
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear revoked: %w", err)
	}
	return res, nil
}

// LinearIgnored records a delivery weft does not act on, so the ledger
// still shows everything Linear sent.
func (in *Ingester) LinearIgnored(ctx context.Context, d thread.Inbound) (LinearResult, error) {
	fresh, err := in.store.RecordInbound(ctx, linearInbound(d, thread.InboundIgnored))
	if err != nil {
		return LinearResult{}, fmt.Errorf("ingest linear ignored: %w", err)
	}
	return LinearResult{Duplicate: !fresh}, nil
}

func linearInbound(d thread.Inbound, outcome thread.InboundOutcome) thread.Inbound {
	d.Platform, d.Outcome = thread.PlatformLinear, outcome
	return d
}

// linearDraft builds the thread the session would get: its initial prompt's
// external id is the session id, unique per session, where a comment id is
// shared by every session started in the same comment thread. It is drafted
// before the transaction because drafting reads the agent's memory on the
// pool: inside the transaction each concurrent delivery would hold one
// connection while waiting for another, and a burst could take them all.
// A redelivery drafts for nothing, which costs one read.
func (in *Ingester) linearDraft(ctx context.Context, s LinearSession) (*thread.Draft, error) {
	return in.Builder().
		WithGoal(s.Goal).
		InteractiveLinear(&s.Attachment).
		WithInitialPrompt(thread.Stitch{Content: s.Prompt, Source: thread.PlatformLinear, ExternalID: s.Attachment.SessionID, Author: s.Creator,
			Metadata: tracing.Stamp(ctx, nil)}).
		Draft(ctx)
}

// linearThread returns the session's thread, making it from draft when it
// does not exist yet (see openSession). It reports whether it made the
// thread.
func (in *Ingester) linearThread(ctx context.Context, tx *db.Tx, s LinearSession, draft *thread.Draft, ack bool) (*thread.Thread, bool, error) {
	sessionID := s.Attachment.SessionID
	th, err := tx.ThreadByLinearSession(ctx, sessionID)
	if err == nil || !errors.Is(err, thread.ErrNotFound) {
		return th, false, err
	}
	err = tx.Savepoint(ctx, func(tx *db.Tx) error {
		th, _, err = in.openSession(ctx, tx, nil, s, draft, ack, false)
		return err
	})
	if errors.Is(err, thread.ErrLinearSessionAttached) {
		// The session's other event made it concurrently; the insert
		// waited for that commit, and the savepoint keeps this
		// transaction going.
		th, err = tx.ThreadByLinearSession(ctx, sessionID)
		return th, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return th, true, nil
}

// openBatch opens the sessions of a batch (see openings) in one
// transaction. When the database refuses it, because one of them is a
// redelivery, say, each half is tried again, down to single sessions, so
// that each gets its own answer and no delivery fails for another's sake,
// in a few transactions rather than one per session. Each caller is
// settled, and its acknowledgement sent, as soon as its session is written.
func (in *Ingester) openBatch(ctx context.Context, batch []*opening) {
	err := in.openTogether(ctx, batch)
	if err != nil && len(batch) > 1 && db.Refused(err) {
		in.logger.DebugContext(ctx, "new sessions refused together; trying them by halves",
			slog.Int("sessions", len(batch)), slog.Any("error", err))
		half := len(batch) / 2
		in.openBatch(ctx, batch[:half])
		in.openBatch(ctx, batch[half:])
		return
	}
	// Written, or failed in a way its parts would fare no better.
	for _, o := range batch {
		o.err = err
	}
	in.opened(batch)
}

// opened settles the callers of a batch whose results are final, sending
// each written session's acknowledgement at once.
func (in *Ingester) opened(batch []*opening) {
	for _, o := range batch {
		if o.err == nil && in.express != nil {
			in.express.Send(o.ctx, o.ack)
		}
		o.settle()
	}
}

// openTogether opens sessions in one transaction: their writes in one
// round trip, their jobs in one insert; it sets their results once that
// has committed. Sessions are written in order of id, so that two batches
// sharing sessions (concurrent redeliveries) take their locks in the same
// order and wait for each other rather than deadlock.
func (in *Ingester) openTogether(ctx context.Context, batch []*opening) error {
	sorted := slices.SortedFunc(slices.Values(batch), func(a, b *opening) int {
		return strings.Compare(a.s.Attachment.SessionID, b.s.Attachment.SessionID)
	})
	express := in.express != nil
	var claim time.Duration
	if express {
		claim = in.express.Claim()
	}
	ws := make([]db.Write, len(sorted))
	for i, o := range sorted {
		ws[i] = sessionWrite(&o.d, o.s, o.draft, true, claim)
	}
	var got []*db.Written
	err := in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) (err error) {
		if got, err = tx.WriteAll(ctx, ws); err != nil {
			return err
		}
		// Each session's jobs carry its own caller's trace, not the
		// batch's (tracing.Middleware would give them all the first's).
		var params []river.InsertManyParams
		for i, o := range sorted {
			opts := &river.InsertOpts{Metadata: tracing.Metadata(o.ctx)}
			for _, a := range sessionJobs(o.s, got[i], express) {
				params = append(params, river.InsertManyParams{Args: a, InsertOpts: opts})
			}
		}
		if _, err := in.jobs.InsertManyTx(ctx, tx.Pgx(), params); err != nil {
			return fmt.Errorf("enqueue session jobs: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, o := range sorted {
		o.th, o.ack = got[i].Thread, got[i].Outbox[0]
	}
	return nil
}

// openSession makes a session's thread from draft, in one round trip with
// the delivery d (when not nil) and, when ack is set, the thought that
// acknowledges the session at once; then it enqueues, in one more, the
// session's jobs (see sessionJobs). It returns the thread and the
// thought's outbox row. A session that has a thread already fails with
// thread.ErrLinearSessionAttached, a delivery seen before with
// thread.ErrDuplicateDelivery; either aborts tx.
func (in *Ingester) openSession(ctx context.Context, tx *db.Tx, d *thread.Inbound, s LinearSession, draft *thread.Draft, ack, express bool) (*thread.Thread, thread.Outbox, error) {
	var claim time.Duration
	if express {
		claim = in.express.Claim()
	}
	got, err := tx.Write(ctx, sessionWrite(d, s, draft, ack, claim))
	if err != nil {
		return nil, thread.Outbox{}, err
	}
	var ackRow thread.Outbox
	if ack {
		ackRow = got.Outbox[0]
	}
	if err := job.InsertTx(ctx, in.jobs, tx.Pgx(), sessionJobs(s, got, express)...); err != nil {
		return nil, thread.Outbox{}, fmt.Errorf("enqueue session jobs: %w", err)
	}
	return got.Thread, ackRow, nil
}

// sessionWrite is the write that makes a session's thread from draft, with
// the delivery d (when not nil) and, when ack is set, the thought that
// acknowledges the session at once. With a claim (express), the thought is
// written claimed that long for an express send, which the caller starts
// after the commit.
func sessionWrite(d *thread.Inbound, s LinearSession, draft *thread.Draft, ack bool, claim time.Duration) db.Write {
	w := db.Write{Inbound: d, New: draft}
	if ack {
		draft.Linear.SessionStatus = thread.SessionActive
		w.Outbox = []thread.Outbox{{Platform: thread.PlatformLinear, Target: s.Attachment.SessionID,
			Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: LinearAck}.JSON()}}
	}
	w.SendingFor = claim
	return w
}

// sessionJobs are the jobs a new session's write needs, in order: the
// thought's delivery, the turn, and the job that moves a delegated issue to
// started. An express thought gets no job: express hands it to one when its
// send fails, and the leader's reclaim when the claim lapses unsent.
func sessionJobs(s LinearSession, got *db.Written, express bool) []river.JobArgs {
	var jobs []river.JobArgs
	if !express {
		jobs = outbox.Deliveries(got.Outbox)
	}
	jobs = append(jobs, job.Turn{ThreadID: got.Thread.ID})
	if s.StartIssue && s.Attachment.IssueID != "" {
		jobs = append(jobs, job.StartLinearIssue{OrganizationID: s.Attachment.WorkspaceID, IssueID: s.Attachment.IssueID})
	}
	return jobs
}

// stopLinear records a user's stop: the stop prompt itself, then the
// thread's abort (which cancels a running turn through its heartbeat) and
// a final response confirming it. A thread that is not running anything
// (finished, or already stopped) is not aborted again, but the stop is
// still recorded and confirmed: Linear asks for an answer either way.
func (in *Ingester) stopLinear(ctx context.Context, tx *db.Tx, threadID uuid.UUID, stop thread.Stitch) error {
	th, err := tx.LockThread(ctx, threadID)
	if err != nil {
		return err
	}
	// The stop prompt is answered by the stop itself, not by a turn: it
	// takes the seq after the head, and the stop's thought covers it.
	e := thread.StopEffects(th.StitchCount+1, LinearStopped)
	e.Stitches = append([]thread.Stitch{stop}, e.Stitches...)
	for i := range e.Outputs {
		e.Outputs[i].Stitch++
	}
	if !thread.CanTransition(th.Status, thread.StatusAborted) {
		e.Status = nil
	}
	_, err = outbox.Write(ctx, tx, in.jobs, threadID, e)
	return err
}
