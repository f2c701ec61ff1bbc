package linear

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Conversations continued elsewhere link back to their Linear issue.
var _ surface.Originating = (*App)(nil)

// OriginStore reads a thread's Linear session. *db.Store implements it.
type OriginStore interface {
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
}

// Origin links a conversation continued elsewhere back to its Linear
// issue.
type Origin struct {
	Store OriginStore
	// IssueURL reads an issue's URL; nil, or a failure, leaves the link
	// out and keeps the label.
	IssueURL func(ctx context.Context, att *thread.LinearAttachment) (string, error)
}

// Origin is the thread's issue key (or "Linear session") and the issue's
// URL, or thread.ErrNotFound for a thread of no Linear session.
func (o Origin) Origin(ctx context.Context, threadID uuid.UUID) (label, url string, err error) {
	lin, err := o.Store.LinearAttachment(ctx, threadID)
	if err != nil {
		return "", "", err
	}
	label = lin.IssueIdentifier
	if label == "" {
		label = "Linear session"
	}
	if o.IssueURL != nil && lin.IssueID != "" {
		// Best effort: the conversation continues without the link.
		url, _ = o.IssueURL(ctx, lin)
	}
	return label, url, nil
}

// Another platform's status command lists the thread's Linear session too.
var _ surface.Describing = (*App)(nil)

// Describe names the thread's Linear issue and its session's state, for
// another platform's status command.
func (a *App) Describe(ctx context.Context, threadID uuid.UUID) (string, error) {
	return Describe(ctx, a.store, threadID)
}

// Describe is "Linear ENG-123 (session active)" for a thread of a Linear
// session, or thread.ErrNotFound.
func Describe(ctx context.Context, store OriginStore, threadID uuid.UUID) (string, error) {
	lin, err := store.LinearAttachment(ctx, threadID)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace("Linear "+lin.IssueIdentifier) + " (session " + string(lin.SessionStatus) + ")", nil
}
