package linear

import (
	"context"
	"errors"
	"log/slog"

	"github.com/riverqueue/river"
)

// IssueStarter moves a delegated Linear issue to its team's first started
// state, acting in the given workspace. *linear.Sender implements it.
type IssueStarter interface {
	StartIssue(ctx context.Context, organizationID, issueID string) (moved bool, err error)
}

// StartIssueWorker works StartIssueArgs, which ingest enqueues when a
// person delegates an issue to the agent. The Linear platform registers it
// (Config.AddWorkers) on its sender, which is an IssueStarter.
type StartIssueWorker struct {
	river.WorkerDefaults[StartIssueArgs]
	starter IssueStarter
	logger  *slog.Logger
}

// NewStartIssueWorker returns the worker; starter is the Linear sender.
func NewStartIssueWorker(starter IssueStarter, logger *slog.Logger) *StartIssueWorker {
	return &StartIssueWorker{starter: starter, logger: logger.With("component", "start_issue")}
}

// Work moves the issue. Failures that a retry cannot fix (no access, no
// such issue) cancel the job: the issue simply stays where it is, which
// costs the user a click, not an answer.
func (w *StartIssueWorker) Work(ctx context.Context, j *river.Job[StartIssueArgs]) error {
	moved, err := w.starter.StartIssue(ctx, j.Args.OrganizationID, j.Args.IssueID)
	if err != nil {
		var r interface{ Retryable() bool }
		if errors.As(err, &r) && !r.Retryable() {
			w.logger.WarnContext(ctx, "cannot move delegated issue to started", slog.String("issue_id", j.Args.IssueID), slog.Any("error", err))
			return river.JobCancel(err)
		}
		return err
	}
	w.logger.InfoContext(ctx, "delegated issue", slog.String("issue_id", j.Args.IssueID), slog.Bool("moved_to_started", moved))
	return nil
}
