package github

import (
	"fmt"
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"
)

// Names of the events weft subscribes to (X-GitHub-Event).
const (
	EventIssueComment             = "issue_comment"
	EventIssues                   = "issues"
	EventReviewComment            = "pull_request_review_comment"
	EventInstallation             = "installation"
	EventInstallationRepositories = "installation_repositories"
	EventPing                     = "ping"
)

// Intent is what a delivery asks of weft, decided here so that the door
// only routes.
type Intent int

// Intents of a delivery.
const (
	// IntentIgnore: acknowledge and drop (another action, the app's own
	// doing, an event weft does not handle).
	IntentIgnore Intent = iota
	// IntentMention: a new comment (issue, PR or review comment) that
	// mentions @slug: start or continue a conversation and answer it.
	IntentMention
	// IntentComment: a new comment without a mention: a stitch, if the
	// issue or review thread already has a weft thread.
	IntentComment
	// IntentEdited and IntentDeleted: a comment was edited or deleted.
	IntentEdited
	IntentDeleted
	// IntentDelegated: an issue was assigned to the app's bot user, or
	// opened mentioning @slug: work it as a delegation.
	IntentDelegated
	// IntentInstalled, IntentUninstalled, IntentSuspended and
	// IntentUnsuspended: the installation itself changed.
	IntentInstalled
	IntentUninstalled
	IntentSuspended
	IntentUnsuspended
	// IntentRepositories: repositories were added to or removed from an
	// installation (or its permissions changed).
	IntentRepositories
)

var intentNames = [...]string{"ignore", "mention", "comment", "edited", "deleted", "delegated",
	"installed", "uninstalled", "suspended", "unsuspended", "repositories"}

// String names the intent for logs and metrics.
func (i Intent) String() string {
	if int(i) < len(intentNames) {
		return intentNames[i]
	}
	return fmt.Sprintf("intent(%d)", int(i))
}

// Event is one webhook delivery, reduced to what weft uses.
type Event struct {
	// Delivery is X-GitHub-Delivery: the same on a redelivery.
	Delivery string
	// Name is X-GitHub-Event and Action the payload's action.
	Name, Action string
	Intent       Intent
	// Installation is the installation's id, 0 if the payload has none.
	Installation int64
	// Account is whom the installation is on (installation events).
	Account User
	Repo    Repo
	Sender  User
	// Issue is the issue or pull request the event is about.
	Issue *Issue
	// Comment is the issue comment or review comment, if any.
	Comment *Comment
	// Assignee is who was assigned or unassigned (issues events).
	Assignee *User
	// Added and Removed are the repositories an installation gained or
	// lost; Added is all of them for installation created.
	Added, Removed []Repo
	// FromApp: the app itself did this (its own comment): never answered.
	FromApp bool
	// Oversized: the payload was too large to parse (over MaxParsed); only
	// Delivery and Name are known.
	Oversized bool
}

// Repo is a repository.
type Repo struct {
	ID          int64
	Owner, Name string
	// OwnerID is the owner's account id, the installation's account for
	// an installed app; 0 where the payload has no owner object.
	OwnerID int64
	Private bool
}

// FullName is "owner/name".
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// User is a GitHub account: a person, a bot or an organization.
type User struct {
	ID    int64
	Login string
	// Type is "User", "Bot" or "Organization".
	Type string
}

// Issue is an issue or a pull request.
type Issue struct {
	Number      int
	Title, Body string
	// State is "open" or "closed"; Merged is set for a merged PR.
	State       string
	Merged      bool
	URL         string
	PullRequest bool
	Labels      []string
	Author      User
	Assignees   []User
	CreatedAt   time.Time
	// Repo is set where the payload says (search results); events carry
	// it on the Event.
	Repo Repo
}

// Comment is an issue comment or a pull request review comment.
type Comment struct {
	ID        int64
	Body, URL string
	Author    User
	CreatedAt time.Time
	UpdatedAt time.Time
	// Review is set for a review comment, with the fields below.
	Review bool
	// InReplyTo is the review thread's first comment, 0 on that comment.
	InReplyTo int64
	Path      string
	DiffHunk  string
	Line      int
}

// ThreadRoot is the id of a review comment's thread (the first comment's
// id), which replies are posted to.
func (c *Comment) ThreadRoot() int64 {
	if c.InReplyTo != 0 {
		return c.InReplyTo
	}
	return c.ID
}

// Parse maps a verified delivery of event name to an Event. Events weft
// does not handle parse to IntentIgnore; a payload that does not decode,
// or a delivery without its id or event, is ErrDelivery.
func (c *Client) Parse(name, delivery string, body []byte) (Event, error) {
	if name == "" || delivery == "" {
		return Event{}, fmt.Errorf("%w: missing %s or %s", ErrDelivery, HeaderEvent, HeaderDelivery)
	}
	ev := Event{Delivery: delivery, Name: name}
	switch name {
	case EventIssueComment, EventIssues, EventReviewComment, EventInstallation, EventInstallationRepositories:
	default:
		return ev, nil
	}
	payload, err := gh.ParseWebHook(name, body)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrDelivery, err)
	}
	switch p := payload.(type) {
	case *gh.IssueCommentEvent:
		ev.Action, ev.Installation = p.GetAction(), p.GetInstallation().GetID()
		ev.Repo, ev.Sender = repoOf(p.Repo), userOf(p.Sender)
		ev.Issue, ev.Comment = issueOf(p.Issue), issueCommentOf(p.Comment)
		ev.FromApp = c.isApp(ev.Comment.Author) || p.GetComment().GetPerformedViaGithubApp().GetID() == c.appID
		ev.Intent = c.commentIntent(ev.Action, ev.Comment, ev.FromApp)
	case *gh.PullRequestReviewCommentEvent:
		ev.Action, ev.Installation = p.GetAction(), p.GetInstallation().GetID()
		ev.Repo, ev.Sender = repoOf(p.Repo), userOf(p.Sender)
		ev.Issue, ev.Comment = pullOf(p.PullRequest), reviewCommentOf(p.Comment)
		ev.FromApp = c.isApp(ev.Comment.Author)
		ev.Intent = c.commentIntent(ev.Action, ev.Comment, ev.FromApp)
	case *gh.IssuesEvent:
		ev.Action, ev.Installation = p.GetAction(), p.GetInstallation().GetID()
		ev.Repo, ev.Sender, ev.Issue = repoOf(p.Repo), userOf(p.Sender), issueOf(p.Issue)
		if p.Assignee != nil {
			a := userOf(p.Assignee)
			ev.Assignee = &a
		}
		ev.FromApp = c.isApp(ev.Sender)
		switch {
		case ev.FromApp:
		case ev.Action == "assigned" && ev.Assignee != nil && c.isApp(*ev.Assignee):
			ev.Intent = IntentDelegated
		case ev.Action == "opened" && c.mention.mentions(ev.Issue.Body):
			ev.Intent = IntentDelegated
		}
	case *gh.InstallationEvent:
		ev.Action, ev.Installation = p.GetAction(), p.GetInstallation().GetID()
		ev.Account, ev.Sender = userOf(p.GetInstallation().Account), userOf(p.Sender)
		ev.Added = reposOf(p.Repositories)
		ev.Intent = map[string]Intent{"created": IntentInstalled, "deleted": IntentUninstalled,
			"suspend": IntentSuspended, "unsuspend": IntentUnsuspended,
			"new_permissions_accepted": IntentRepositories}[ev.Action]
	case *gh.InstallationRepositoriesEvent:
		ev.Action, ev.Installation = p.GetAction(), p.GetInstallation().GetID()
		ev.Account, ev.Sender = userOf(p.GetInstallation().Account), userOf(p.Sender)
		ev.Added, ev.Removed = reposOf(p.RepositoriesAdded), reposOf(p.RepositoriesRemoved)
		ev.Intent = IntentRepositories
	}
	return ev, nil
}

// commentIntent is what a comment event asks: the app's own comments are
// never answered, whatever they say.
func (c *Client) commentIntent(action string, cm *Comment, fromApp bool) Intent {
	if fromApp {
		return IntentIgnore
	}
	switch action {
	case "created":
		if c.mention.mentions(cm.Body) {
			return IntentMention
		}
		return IntentComment
	case "edited":
		return IntentEdited
	case "deleted":
		return IntentDeleted
	}
	return IntentIgnore
}

// isApp reports whether u is the app's bot user, SLUG[bot].
func (c *Client) isApp(u User) bool {
	return strings.EqualFold(u.Login, c.BotLogin())
}

func userOf(u *gh.User) User {
	return User{ID: u.GetID(), Login: u.GetLogin(), Type: u.GetType()}
}

func repoOf(r *gh.Repository) Repo {
	owner := r.GetOwner().GetLogin()
	if owner == "" {
		// Installation payloads carry full_name but no owner.
		owner, _, _ = strings.Cut(r.GetFullName(), "/")
	}
	return Repo{ID: r.GetID(), Owner: owner, OwnerID: r.GetOwner().GetID(), Name: r.GetName(), Private: r.GetPrivate()}
}

func reposOf(rs []*gh.Repository) []Repo {
	out := make([]Repo, 0, len(rs))
	for _, r := range rs {
		out = append(out, repoOf(r))
	}
	return out
}

func issueOf(i *gh.Issue) *Issue {
	out := &Issue{
		Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), State: i.GetState(),
		URL: i.GetHTMLURL(), PullRequest: i.IsPullRequest(), Author: userOf(i.User),
		CreatedAt: i.GetCreatedAt().Time,
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, userOf(a))
	}
	if u := i.GetRepositoryURL(); u != "" {
		out.Repo = repoOfURL(u)
	}
	return out
}

// repoOfURL reads owner and name from a repository API URL
// (.../repos/OWNER/NAME), as search results give it.
func repoOfURL(u string) Repo {
	_, path, ok := strings.Cut(u, "/repos/")
	if !ok {
		return Repo{}
	}
	owner, name, _ := strings.Cut(path, "/")
	return Repo{Owner: owner, Name: name}
}

func pullOf(p *gh.PullRequest) *Issue {
	out := &Issue{
		Number: p.GetNumber(), Title: p.GetTitle(), Body: p.GetBody(), State: p.GetState(),
		Merged: p.GetMerged(), URL: p.GetHTMLURL(), PullRequest: true, Author: userOf(p.User),
		CreatedAt: p.GetCreatedAt().Time,
	}
	for _, l := range p.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range p.Assignees {
		out.Assignees = append(out.Assignees, userOf(a))
	}
	return out
}

func issueCommentOf(c *gh.IssueComment) *Comment {
	return &Comment{ID: c.GetID(), Body: c.GetBody(), URL: c.GetHTMLURL(), Author: userOf(c.User),
		CreatedAt: c.GetCreatedAt().Time, UpdatedAt: c.GetUpdatedAt().Time}
}

func reviewCommentOf(c *gh.PullRequestComment) *Comment {
	return &Comment{ID: c.GetID(), Body: c.GetBody(), URL: c.GetHTMLURL(), Author: userOf(c.User),
		CreatedAt: c.GetCreatedAt().Time, UpdatedAt: c.GetUpdatedAt().Time,
		Review: true, InReplyTo: c.GetInReplyTo(), Path: c.GetPath(), DiffHunk: c.GetDiffHunk(), Line: c.GetLine()}
}
