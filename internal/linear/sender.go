package linear

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Workspaces finds the Linear attachment of a thread, whose WorkspaceID
// says which installation's token a send uses. *db.Store implements it.
type Workspaces interface {
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
}

// Sender posts outbox rows into Linear agent sessions: the processor's
// Sender for the linear platform. The row's id is the activity's id (see
// ActivityID), so a retried send of a row Linear already took counts as
// delivered.
type Sender struct {
	c          *Client
	workspaces Workspaces
	// known caches each thread's workspace, which never changes, so a
	// session's posts after its first need no lookup.
	mu    sync.Mutex
	known map[uuid.UUID]string
}

// maxKnown bounds the workspace cache; past it, it starts again.
const maxKnown = 10000

// NewSender returns a Sender posting through c. The workspace of each row
// is looked up through workspaces rather than carried in the row: rows are
// written by code that knows only the session id. With one token for every
// workspace (StaticToken), workspaces is nil and nothing is looked up.
func NewSender(c *Client, workspaces Workspaces) *Sender {
	return &Sender{c: c, workspaces: workspaces, known: map[uuid.UUID]string{}}
}

// Send posts one outbox row and returns Linear's id for it (the activity
// id, or the session id for a session update). Rate limits, server errors
// and network failures come back as they are, for the processor to retry;
// a row Linear refuses, or that cannot be sent at all, comes back wrapping
// thread.ErrInvalid, so the processor gives up on it at once.
func (s *Sender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	body, err := surface.Body(thread.PlatformLinear, o)
	if err != nil {
		return "", err
	}
	workspace, err := s.workspace(ctx, o.ThreadID)
	if errors.Is(err, thread.ErrNotFound) {
		return "", fmt.Errorf("linear: send %s: %w: thread has no linear session", o.ID, thread.ErrInvalid)
	}
	if err != nil {
		return "", fmt.Errorf("linear: send %s: find workspace: %w", o.ID, err)
	}
	ctx = WithOrganization(ctx, workspace)
	if o.Kind == thread.OutboxSessionUpdate {
		err := s.c.UpdateSession(ctx, o.Target, SessionUpdate{ExternalURL: body.ExternalURL, ExternalURLLabel: body.ExternalURLLabel})
		if err != nil {
			return "", surface.SendError(platform, o, err)
		}
		return o.Target, nil
	}
	a, err := activityOf(o, body)
	if err != nil {
		return "", fmt.Errorf("linear: send %s: %w: %w", o.ID, thread.ErrInvalid, err)
	}
	id, err := s.c.CreateActivity(ctx, o.Target, a)
	if err != nil {
		return "", surface.SendError(platform, o, err)
	}
	return id, nil
}

// workspace is the id of the workspace the thread's session is in.
func (s *Sender) workspace(ctx context.Context, threadID uuid.UUID) (string, error) {
	if s.workspaces == nil {
		return "", nil
	}
	s.mu.Lock()
	id, ok := s.known[threadID]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	att, err := s.workspaces.LinearAttachment(ctx, threadID)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if len(s.known) >= maxKnown {
		clear(s.known)
	}
	s.known[threadID] = att.WorkspaceID
	s.mu.Unlock()
	return att.WorkspaceID, nil
}

// activityOf maps an outbox row to the activity it posts. Two kinds of row
// are ephemeral, replaced by the next activity rather than kept: a thought
// tied to no stitch (weft's own status note, such as the acknowledgement of
// a new session), and an action without a result (a tool call still
// running; its completion is posted with the result).
func activityOf(o thread.Outbox, b thread.OutboxBody) (Activity, error) {
	a := Activity{ID: ActivityID(o.ID), Body: b.Text}
	switch o.Kind {
	case thread.OutboxThought:
		a.Type, a.Ephemeral = ActivityThought, o.StitchID == uuid.Nil
	case thread.OutboxNotice:
		// weft's own word on the turn (the model is busy): a thought that
		// stays, so the session does not look idle while the turn waits.
		a.Type = ActivityThought
	case thread.OutboxAction:
		a.Type, a.Action, a.Parameter, a.Result = ActivityAction, b.Action, b.Parameter, b.Result
		a.Ephemeral = b.Result == ""
	case thread.OutboxElicitation:
		a.Type, a.Options = ActivityElicitation, b.Options
	case thread.OutboxResponse:
		a.Type = ActivityResponse
	case thread.OutboxError:
		a.Type = ActivityError
	default:
		return Activity{}, fmt.Errorf("no linear activity for a %s", o.Kind)
	}
	return a, nil
}

// ActivityID is the activity id an outbox row is posted under: the row's
// id with its version nibble set to 4. Linear documents client-chosen ids
// as "UUID v4 format" and weft's ids are v7 (time-ordered); every v7 id
// has the same version nibble, so overwriting it keeps ids distinct, and
// the same row always maps to the same activity.
func ActivityID(outboxID uuid.UUID) string {
	id := outboxID
	id[6] = id[6]&0x0f | 0x40
	return id.String()
}

// StartIssue moves a delegated issue to started (Client.StartIssue) as the
// installation in the given workspace. The start-issue job calls it.
func (s *Sender) StartIssue(ctx context.Context, organizationID, issueID string) (bool, error) {
	return s.c.StartIssue(WithOrganization(ctx, organizationID), issueID)
}
