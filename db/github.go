package db

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

func queueAttachGitHub(ctx context.Context, p *pipeline, g *thread.GitHubAttachment) {
	arg := dbsqlc.InsertGitHubAttachmentParams{
		ThreadID: g.ThreadID, InstallationID: g.InstallationID, AccountID: g.AccountID, RepoID: g.RepoID, RepoOwner: g.Owner, RepoName: g.Repo,
		Number: int32(g.Number), IsPullRequest: g.PullRequest, CreatedBy: g.CreatedBy,
	}
	if g.ReviewRoot != 0 {
		arg.ReviewRootID = &g.ReviewRoot
	}
	p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertGitHubAttachment(ctx, arg)) })
}

// AttachGitHub attaches a thread (g's ThreadID) to an issue or pull
// request it continues on: a conversation begun elsewhere. One the issue
// has a thread already fails with thread.ErrGitHubThreadAttached, a
// thread on GitHub already with thread.ErrAlreadyAttached.
func (q *Queries) AttachGitHub(ctx context.Context, g thread.GitHubAttachment) error {
	if err := g.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, g.ThreadID, func(p *pipeline) { queueAttachGitHub(ctx, p, &g) })
}

// GitHubAttachment returns a thread's GitHub attachment, or
// thread.ErrNotFound.
func (q *Queries) GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error) {
	r, err := q.gen.GitHubAttachment(ctx, threadID)
	if err != nil {
		return nil, fmt.Errorf("github attachment: %w", translate(err))
	}
	g := &thread.GitHubAttachment{
		ThreadID: r.ThreadID, InstallationID: r.InstallationID, AccountID: r.AccountID, RepoID: r.RepoID, Owner: r.RepoOwner, Repo: r.RepoName,
		Number: int(r.Number), PullRequest: r.IsPullRequest, CreatedBy: r.CreatedBy, Active: r.IsActive,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if r.ReviewRootID != nil {
		g.ReviewRoot = *r.ReviewRootID
	}
	return g, nil
}

// ThreadByGitHubConversation returns the thread attached to an issue or
// PR (reviewRoot 0) or to one of its review threads, or thread.ErrNotFound.
func (q *Queries) ThreadByGitHubConversation(ctx context.Context, repoID int64, number int, reviewRoot int64) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadByGitHubConversation(ctx, dbsqlc.ThreadByGitHubConversationParams{
		RepoID: repoID, Number: int32(number), ReviewRoot: reviewRoot}))
	if err != nil {
		return nil, fmt.Errorf("thread by github conversation: %w", err)
	}
	return t, nil
}

// setGitHubActive marks a GitHub attachment active or not; one already so
// changes nothing.
func (q *Queries) setGitHubActive(ctx context.Context, g *thread.GitHubAttachment, active bool) error {
	_, err := q.gen.SetGitHubActive(ctx, dbsqlc.SetGitHubActiveParams{IsActive: active, RepoID: g.RepoID,
		Number: int32(g.Number), ReviewRoot: g.ReviewRoot})
	if err != nil {
		return fmt.Errorf("set github active: %w", translate(err))
	}
	return nil
}

// GitHubInstallation is one installation of the GitHub App, on an account.
type GitHubInstallation struct {
	ID           int64
	AccountID    int64
	AccountLogin string
}

// UpsertGitHubInstallation records an installation, installed (again).
func (q *Queries) UpsertGitHubInstallation(ctx context.Context, in GitHubInstallation) error {
	err := q.gen.UpsertGitHubInstallation(ctx, dbsqlc.UpsertGitHubInstallationParams{
		InstallationID: in.ID, AccountID: in.AccountID, AccountLogin: in.AccountLogin})
	if err != nil {
		return fmt.Errorf("upsert github installation: %w", translate(err))
	}
	return nil
}

// SetGitHubInstallationSuspended records a suspend or an unsuspend; an
// installation weft never saw changes nothing.
func (q *Queries) SetGitHubInstallationSuspended(ctx context.Context, id int64, suspended bool) error {
	if _, err := q.gen.SetGitHubInstallationSuspended(ctx, dbsqlc.SetGitHubInstallationSuspendedParams{
		InstallationID: id, Suspended: suspended}); err != nil {
		return fmt.Errorf("suspend github installation: %w", translate(err))
	}
	return nil
}

// GitHubInstallationGone reports whether an installation was uninstalled
// or is suspended; one weft never saw is not.
func (q *Queries) GitHubInstallationGone(ctx context.Context, id int64) (bool, error) {
	gone, err := q.gen.GitHubInstallationGone(ctx, id)
	if err != nil {
		return false, fmt.Errorf("github installation gone: %w", translate(err))
	}
	return gone, nil
}

// removeGitHubInstallations marks an account's installations uninstalled
// and reports whether one was installed.
func (q *Queries) removeGitHubInstallations(ctx context.Context, accountID string) (bool, error) {
	id, err := strconv.ParseInt(accountID, 10, 64)
	if err != nil {
		return false, fmt.Errorf("remove github installations: %w: account %q", thread.ErrInvalid, accountID)
	}
	n, err := q.gen.RemoveGitHubInstallations(ctx, id)
	if err != nil {
		return false, fmt.Errorf("remove github installations: %w", translate(err))
	}
	return n > 0, nil
}

// GitHubInstallationsOf is the live (installed, not suspended)
// installations whose account is of organisation, every live one for the
// operator (""): the installations a conversation of that organisation
// may read through.
func (q *Queries) GitHubInstallationsOf(ctx context.Context, organisation string) ([]GitHubInstallation, error) {
	rows, err := q.gen.GitHubInstallationsOf(ctx, organisation)
	if err != nil {
		return nil, fmt.Errorf("github installations of %q: %w", organisation, translate(err))
	}
	out := make([]GitHubInstallation, len(rows))
	for i, r := range rows {
		out[i] = GitHubInstallation{ID: r.InstallationID, AccountID: r.AccountID, AccountLogin: r.AccountLogin}
	}
	return out, nil
}

// ThreadByGitHubIssue returns the thread attached to issue or pull request
// number of owner/repo (names compared as GitHub does, case aside) whose
// account is in organisation, as its URL names it, or thread.ErrNotFound.
func (q *Queries) ThreadByGitHubIssue(ctx context.Context, owner, repo string, number int, organisation string) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadByGitHubIssue(ctx, dbsqlc.ThreadByGitHubIssueParams{
		Owner: owner, Repo: repo, Number: int32(number), Organisation: organisation}))
	if err != nil {
		return nil, fmt.Errorf("thread by github issue: %w", err)
	}
	return t, nil
}
