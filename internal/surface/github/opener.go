package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/continuation"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/toolschema"
)

// OpenerStore is what continuing on GitHub reads: a thread's attachment
// and the live installations. *db.Store implements it.
type OpenerStore interface {
	GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error)
	GitHubInstallationsOf(ctx context.Context, organisation string) ([]db.GitHubInstallation, error)
}

// Opener continues a conversation begun elsewhere on an existing GitHub
// issue or pull request, for continuation.Continuer: its "channel" is the
// issue's URL. weft creates no issues; an issue with a conversation of its
// own already is refused (thread.ErrGitHubThreadAttached).
type Opener struct {
	Client *githubapi.Client
	Store  OpenerStore
	Grants *Grants
	// Web is GitHub's site, for links.
	Web string
}

var _ continuation.Opener = Opener{}

// Platform is GitHub.
func (Opener) Platform() thread.Platform { return thread.PlatformGitHub }

// Attached links the issue thread id continues on.
func (o Opener) Attached(ctx context.Context, id uuid.UUID) (string, error) {
	att, err := o.Store.GitHubAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	return IssueURL(o.Web, att), nil
}

// Tenant is the account of the installation that grants the issue's
// repository.
func (o Opener) Tenant(ctx context.Context, issueURL string) (thread.Tenant, error) {
	_, in, _, err := o.locate(ctx, issueURL)
	if err != nil {
		return thread.Tenant{}, err
	}
	return thread.GitHubTenant(in.AccountID), nil
}

// Open attaches th to the issue or pull request: it must exist.
func (o Opener) Open(ctx context.Context, th *thread.Thread, op continuation.Opening) (*thread.Continuation, error) {
	ref, in, repo, err := o.locate(ctx, op.ChannelID)
	if err != nil {
		return nil, err
	}
	is, err := o.Client.GetIssue(ctx, in.ID, repo, ref.Number)
	if surface.IsKind(err, surface.KindNotFound) {
		return nil, &thread.Error{Kind: thread.ErrInvalid, Msg: fmt.Sprintf("%s#%d does not exist", repo.FullName(), ref.Number)}
	}
	if err != nil {
		return nil, err
	}
	by := op.By
	if by == "" {
		by = "weft"
	}
	att := &thread.GitHubAttachment{ThreadID: th.ID, InstallationID: in.ID, AccountID: in.AccountID, RepoID: repo.ID,
		Owner: repo.Owner, Repo: repo.Name, Number: ref.Number, PullRequest: is.PullRequest, CreatedBy: by}
	return &thread.Continuation{GitHub: att, URL: IssueURL(o.Web, att)}, nil
}

// Bold is Markdown's.
func (Opener) Bold(text string) string { return "**" + text + "**" }

// Invite ends the summary: on GitHub only a mention is answered.
func (o Opener) Invite() string {
	return "Mention @" + o.Client.Slug() + " in a comment here to continue; I have the whole conversation."
}

// locate reads an issue's URL and finds the live installation that
// grants its repository, with the repository.
func (o Opener) locate(ctx context.Context, issueURL string) (IssueRef, db.GitHubInstallation, githubapi.Repo, error) {
	ref, ok := ParseIssueURL(issueURL)
	if !ok {
		if ref, ok = parseShortRef(issueURL); !ok {
			return IssueRef{}, db.GitHubInstallation{}, githubapi.Repo{}, &thread.Error{Kind: thread.ErrInvalid,
				Msg: fmt.Sprintf("%q is not a GitHub issue or pull request URL", issueURL)}
		}
	}
	ins, err := o.Store.GitHubInstallationsOf(ctx, "")
	if err != nil {
		return IssueRef{}, db.GitHubInstallation{}, githubapi.Repo{}, err
	}
	full := ref.Owner + "/" + ref.Repo
	for _, in := range ins {
		if !strings.EqualFold(in.AccountLogin, ref.Owner) {
			continue
		}
		repos, err := o.Grants.Repositories(ctx, in.ID)
		if err != nil {
			return IssueRef{}, db.GitHubInstallation{}, githubapi.Repo{}, err
		}
		for _, r := range repos {
			if strings.EqualFold(r.FullName(), full) {
				return ref, in, r, nil
			}
		}
	}
	return IssueRef{}, db.GitHubInstallation{}, githubapi.Repo{}, &thread.Error{Kind: thread.ErrInvalid,
		Msg: fmt.Sprintf("weft's GitHub App is not installed on %s", full)}
}

// Continuer continues conversations on GitHub issues; nil with GitHub off.
func (a *App) Continuer(store *db.Store, rec continuation.Recorder, refs []continuation.Resolver,
	origins []continuation.Originator) *continuation.Continuer {
	if !a.On() {
		return nil
	}
	return &continuation.Continuer{Store: store, Opener: Opener{Client: a.client, Store: store, Grants: a.grants, Web: a.webURL()},
		Recorder: rec, Refs: refs, Origins: origins}
}

type continueArgs struct {
	URL string `json:"url" jsonschema:"The GitHub issue or pull request to continue on: its URL, or owner/name#number"`
}

// ContinueTool is continue_in_github, for a conversation begun on another
// platform: it attaches the conversation to an existing issue or pull
// request of the same organisation and posts a summary there; nil
// without a continuer.
func ContinueTool(c *continuation.Continuer) []tools.Tool {
	if c == nil {
		return nil
	}
	return []tools.Tool{{
		Name: "continue_in_github",
		Description: "Continue this conversation on an existing GitHub issue or pull request: it posts a summary of the conversation " +
			"there, and mentions of the app on it continue this conversation. Use it when the user asks to move or continue the " +
			"discussion on GitHub and names the issue. It creates no issue. Returns the issue's link.",
		Schema: toolschema.For[continueArgs](),
		Handler: func(ctx context.Context, call tools.Call) (string, error) {
			args, err := tools.Decode[continueArgs](call)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(args.URL) == "" {
				return "", errors.New("url is required: the issue or pull request to continue on")
			}
			got, err := c.Continue(ctx, call.ThreadID, strings.TrimSpace(args.URL), call.AgentName)
			switch {
			case errors.Is(err, thread.ErrGitHubThreadAttached):
				return "", errors.New("that issue has a conversation of its own already: mention the app there, or continue that one here")
			case err != nil:
				return "", err
			case got.Existing:
				return "This conversation already continues on GitHub: " + got.URL, nil
			}
			return "Posted a summary of the conversation on " + got.URL + "; mentions of the app there continue it.", nil
		},
	}}
}
