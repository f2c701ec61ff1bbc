package linear

import (
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/internal/job"
)

// StartIssueArgs asks for a delegated Linear issue to be moved to its
// team's first started state. It runs off the webhook's request path: the
// webhook must answer Linear within seconds, and this takes three API calls.
type StartIssueArgs struct {
	// OrganizationID is the workspace, whose installation's token is used.
	OrganizationID string `json:"organization_id"`
	IssueID        string `json:"issue_id"`
}

// Kind implements river.JobArgs.
func (StartIssueArgs) Kind() string { return "weft_linear_start_issue" }

// StartIssueMaxAttempts bounds retries: moving the issue is a
// courtesy Linear asks for, not worth retrying for long.
const StartIssueMaxAttempts = 5

// InsertOpts puts it on the deliveries queue: short platform calls. It
// needs no uniqueness: moving an issue that is already started is a no-op.
func (StartIssueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: job.QueueDeliveries, MaxAttempts: StartIssueMaxAttempts}
}
