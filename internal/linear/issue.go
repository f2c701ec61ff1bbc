package linear

import (
	"context"
	"slices"
	"time"
)

// Issue is a Linear issue with the context an agent needs.
type Issue struct {
	ID          string
	Identifier  string // e.g. "ENG-123"
	Title       string
	Description string
	URL         string
	TeamID      string
	TeamKey     string
	TeamName    string
	ProjectID   string // empty when the issue is in no project
	ProjectName string
	StateID     string
	StateName   string
	// StateType is the workflow state's category: triage, backlog,
	// unstarted, started, completed or canceled.
	StateType  string
	DelegateID string // the agent user working on it, if any
	// Comments are the issue's comments, oldest first: at most the 100
	// most recent, MoreComments says whether there were older ones.
	Comments     []Comment
	MoreComments bool
}

// Comment is one comment on an issue.
type Comment struct {
	ID         string
	Body       string
	AuthorName string // empty for comments by integrations
	CreatedAt  time.Time
	EditedAt   time.Time // zero if never edited
}

// Issue fetches an issue by id or identifier ("ENG-123").
func (c *Client) Issue(ctx context.Context, id string) (*Issue, error) {
	var resp *issueResponse
	err := c.do(ctx, "get issue", func(ctx context.Context) error {
		var err error
		resp, err = issue(ctx, c.gql, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	in := resp.Issue
	out := &Issue{
		ID: in.Id, Identifier: in.Identifier, Title: in.Title, Description: in.Description, URL: in.Url,
		TeamID: in.Team.Id, TeamKey: in.Team.Key, TeamName: in.Team.Name,
		ProjectID: in.Project.Id, ProjectName: in.Project.Name,
		StateID: in.State.Id, StateName: in.State.Name, StateType: in.State.Type,
		DelegateID:   in.Delegate.Id,
		MoreComments: in.Comments.PageInfo.HasNextPage,
	}
	for _, n := range in.Comments.Nodes {
		out.Comments = append(out.Comments, Comment{ID: n.Id, Body: n.Body, AuthorName: n.User.Name, CreatedAt: n.CreatedAt, EditedAt: n.EditedAt})
	}
	slices.SortStableFunc(out.Comments, func(a, b Comment) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// StartIssue moves an issue the agent was delegated to the team's first
// "started" workflow state (lowest position), as Linear's agent guidelines
// ask. An issue already started, completed or canceled is left alone, and
// so is a team without a started state. It reports whether it moved the
// issue.
//
// Linear also asks agents to leave issues delegated by an automation in
// triage for a human: callers should only call StartIssue when a person
// delegated the issue (the created event has a creator).
func (c *Client) StartIssue(ctx context.Context, issueID string) (bool, error) {
	const op = "start issue"
	var cur *issueStateResponse
	err := c.do(ctx, op, func(ctx context.Context) error {
		var err error
		cur, err = issueState(ctx, c.gql, issueID)
		return err
	})
	if err != nil {
		return false, err
	}
	switch cur.Issue.State.Type {
	case "started", "completed", "canceled":
		return false, nil
	}
	var states *teamStartedStatesResponse
	err = c.do(ctx, op, func(ctx context.Context) error {
		var err error
		states, err = teamStartedStates(ctx, c.gql, cur.Issue.Team.Id)
		return err
	})
	if err != nil {
		return false, err
	}
	var target *teamStartedStatesTeamStatesWorkflowStateConnectionNodesWorkflowState
	for i, s := range states.Team.States.Nodes {
		// The filter asks Linear for started states only; checking again
		// costs nothing and guards against a filter silently ignored.
		if s.Type == "started" && (target == nil || s.Position < target.Position) {
			target = &states.Team.States.Nodes[i]
		}
	}
	if target == nil {
		return false, nil
	}
	err = c.do(ctx, op, func(ctx context.Context) error {
		resp, err := issueUpdate(ctx, c.gql, cur.Issue.Id, target.Id)
		if err == nil && !resp.IssueUpdate.Success {
			return errNotSuccessful
		}
		return err
	})
	return err == nil, err
}
