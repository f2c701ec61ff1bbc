package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/thread"
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
	var res LinearResult
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if fresh, err := tx.RecordInbound(ctx, linearInbound(d, thread.InboundProcessed)); err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		th, _, err := in.linearThread(ctx, tx, s, draft, true)
		if err != nil {
			return err
		}
		res.ThreadID = th.ID
		return tx.SetInboundThread(ctx, thread.PlatformLinear, d.DeliveryID, th.ID.String())
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
		WithInitialPrompt(thread.Stitch{Content: s.Prompt, Source: thread.PlatformLinear, ExternalID: s.Attachment.SessionID, Author: s.Creator}).
		Draft(ctx)
}

// linearThread returns the session's thread, making it from draft when it
// does not exist yet, together with the acknowledging thought when ack is
// set, a turn, and the job that moves a delegated issue to started. It
// reports whether it made the thread.
func (in *Ingester) linearThread(ctx context.Context, tx *db.Tx, s LinearSession, draft *thread.Draft, ack bool) (*thread.Thread, bool, error) {
	sessionID := s.Attachment.SessionID
	th, err := tx.ThreadByLinearSession(ctx, sessionID)
	if err == nil || !errors.Is(err, thread.ErrNotFound) {
		return th, false, err
	}
	th, err = tx.CreateThread(ctx, draft)
	if errors.Is(err, thread.ErrLinearSessionAttached) {
		// The session's other event made it concurrently; the insert
		// waited for that commit (CreateThread runs in a savepoint, so
		// this transaction goes on).
		th, err = tx.ThreadByLinearSession(ctx, sessionID)
		return th, false, err
	}
	if err != nil {
		return nil, false, err
	}
	if ack {
		err := outbox.Enqueue(ctx, tx, in.jobs, thread.Outbox{
			ThreadID: th.ID, Platform: thread.PlatformLinear, Target: sessionID, Kind: thread.OutboxThought,
		}, thread.OutboxBody{Text: LinearAck})
		if err != nil {
			return nil, false, err
		}
		if err := tx.SetLinearSessionStatus(ctx, sessionID, thread.SessionActive); err != nil {
			return nil, false, err
		}
	}
	if err := in.enqueueTurn(ctx, tx, th.ID); err != nil {
		return nil, false, err
	}
	if s.StartIssue && s.Attachment.IssueID != "" {
		args := job.StartLinearIssue{OrganizationID: s.Attachment.WorkspaceID, IssueID: s.Attachment.IssueID}
		if _, err := in.jobs.InsertTx(ctx, tx.Pgx(), args, nil); err != nil {
			return nil, false, fmt.Errorf("enqueue start issue: %w", err)
		}
	}
	return th, true, nil
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
