package linear

import (
	"context"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/thread"
)

// HistorySection is Linear's history section: the comments of the
// session's issue, read through f with the workspace's token.
func HistorySection(f history.Fetcher, store Attachments) *history.Fetched {
	return &history.Fetched{Fetcher: f, Tag: "linear_issue_context",
		Ref: func(ctx context.Context, th *thread.Thread) (history.Ref, bool, error) {
			l, err := store.LinearAttachment(ctx, th.ID)
			if err != nil {
				return history.Ref{}, false, err
			}
			return history.Ref{ID: l.IssueID, Workspace: l.WorkspaceID}, l.IssueID != "", nil
		}}
}
