package linear

import (
	"context"

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
