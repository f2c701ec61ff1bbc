package linear

import (
	"encoding/json"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Texts weft posts into a Linear session on its own, before any turn.
const (
	// Ack is the thought that acknowledges a new session at once: Linear
	// marks a session unresponsive without an activity within 10 s, and a
	// turn's first LLM call may take longer than that.
	Ack = "Looking into it…"
	// Stopped confirms a user's stop request, as Linear requires.
	Stopped = "Stopped. I won't do anything more here until you ask again."
)

// Session is a Linear agent session as a webhook describes it, in weft's
// terms: what a new thread is attached to and starts from. Both created
// and prompted events carry it, so whichever arrives first can make the
// session's thread.
type Session struct {
	// Attachment ties the thread to the session. SessionID, WorkspaceID and
	// CreatedByUserID are required.
	Attachment thread.LinearAttachment
	// Goal is what the thread is for, e.g. the issue's identifier and title.
	Goal string
	// Prompt is the thread's initial prompt: Linear's prompt context (issue,
	// comment thread, guidance) or its rendering from the payload.
	Prompt string
	// Files are the uploads Prompt shows (linear.Uploads.Files), read for
	// the model when it is called.
	Files []thread.File
	// Creator started the session; nil for an automation.
	Creator *thread.Author
	// StartIssue asks for the issue to be moved to started: a person
	// delegated it to the agent. Done by a job, off the webhook's path.
	StartIssue bool
}

// Prompt is a user's message in a session (a prompted event).
type Prompt struct {
	// ActivityID is the prompt activity's id: the stitch's external id.
	ActivityID string
	Text       string
	// Files are the uploads Text shows.
	Files  []thread.File
	Author *thread.Author
	// Stop is the user's stop request: the thread is aborted, not answered.
	Stop bool
}

// Created is a created event (the agent was mentioned or delegated): the
// session's thread with its initial prompt, acknowledged at once by a
// thought. When a prompted event of the same session got there first and
// made the thread already, only the delivery is recorded.
func Created(d thread.Inbound, s Session) surface.Event {
	return opening(d, s, true)
}

// Prompted is a prompted event: the user's message as a linear_activity
// stitch, answered by a turn (which reopens a completed or waiting
// thread), or, for a stop request, the thread's abort with a response
// confirming it. A prompt that arrives before its session's created event
// makes the session's thread first, from the session its payload carries;
// a stop that does needs no acknowledgement, its confirmation being the
// first activity.
func Prompted(d thread.Inbound, s Session, p Prompt) surface.Event {
	ev := opening(d, s, !p.Stop)
	ev.Kind, ev.Opens = surface.Message, true
	ev.Messages = []thread.Stitch{{Type: thread.StitchLinearActivity, Content: p.Text, ExternalID: p.ActivityID, Author: p.Author,
		Metadata: filesMeta(p.Files)}}
	ev.Answer = true
	if p.Stop {
		ev.Kind, ev.Reply = surface.Stop, Stopped
	}
	return ev
}

// Revoked is an OAuthApp revoked event: the workspace uninstalled the app,
// so its installation is deactivated.
func Revoked(d thread.Inbound, organizationID string) surface.Event {
	d.Platform = thread.PlatformLinear
	return surface.Event{Kind: surface.Revoke, Inbound: d, Tenant: thread.LinearTenant(organizationID)}
}

// Ignored is a delivery weft does not act on, recorded so that the ledger
// still shows everything Linear sent.
func Ignored(d thread.Inbound) surface.Event {
	d.Platform = thread.PlatformLinear
	return surface.Event{Kind: surface.Ignore, Inbound: d}
}

// opening is the Open that makes s's thread: its initial prompt's external
// id is the session id, unique per session, where a comment id is shared
// by every session started in the same comment thread. With ack, the
// session is active from the start and a thought acknowledges it.
func opening(d thread.Inbound, s Session, ack bool) surface.Event {
	d.Platform = thread.PlatformLinear
	att := s.Attachment
	ev := surface.Event{Kind: surface.Open, Inbound: d, Conversation: &att, Goal: s.Goal, Answer: true,
		Prompt: thread.Stitch{Content: s.Prompt, Source: thread.PlatformLinear, ExternalID: att.SessionID, Author: s.Creator,
			Metadata: filesMeta(s.Files)}}
	if ack {
		att.SessionStatus = thread.SessionActive
		ev.Ack = &thread.Outbox{Platform: thread.PlatformLinear, Target: att.SessionID,
			Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: Ack}.JSON()}
	}
	if s.StartIssue && att.IssueID != "" {
		ev.Jobs = []surface.Job{StartIssueArgs{OrganizationID: att.WorkspaceID, IssueID: att.IssueID}}
	}
	return ev
}

// filesMeta is the stitch metadata naming files, or none.
func filesMeta(files []thread.File) json.RawMessage {
	if len(files) == 0 {
		return nil
	}
	return thread.Meta{Files: files}.JSON()
}
