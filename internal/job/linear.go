package job

import "github.com/riverqueue/river"

// StartLinearIssue asks for a delegated Linear issue to be moved to its
// team's first started state. It runs off the webhook's request path: the
// webhook must answer Linear within seconds, and this takes three API calls.
type StartLinearIssue struct {
	// OrganizationID is the workspace, whose installation's token is used.
	OrganizationID string `json:"organization_id"`
	IssueID        string `json:"issue_id"`
}

// Kind implements river.JobArgs.
func (StartLinearIssue) Kind() string { return "weft_linear_start_issue" }

// StartLinearIssueMaxAttempts bounds retries: moving the issue is a
// courtesy Linear asks for, not worth retrying for long.
const StartLinearIssueMaxAttempts = 5

// InsertOpts puts it on the deliveries queue: short platform calls. It
// needs no uniqueness: moving an issue that is already started is a no-op.
func (StartLinearIssue) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries, MaxAttempts: StartLinearIssueMaxAttempts}
}
