package github

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// GitHub's conversations are named by their URLs, for continuing them
// elsewhere, and a conversation continued elsewhere links back to its
// issue or pull request.
var (
	_ surface.Resolving   = (*App)(nil)
	_ surface.Originating = (*App)(nil)
)

// RefStore finds the thread of an issue or pull request by the names in
// its URL. *db.Store implements it.
type RefStore interface {
	ThreadByGitHubIssue(ctx context.Context, owner, repo string, number int, organisation string) (*thread.Thread, error)
}

// Refs finds the GitHub conversations people name: an issue's or pull
// request's URL, or owner/repo#number.
type Refs struct{ Store RefStore }

// Name is GitHub.
func (Refs) Name() thread.Platform { return thread.PlatformGitHub }

// Hint is what names a GitHub conversation.
func (Refs) Hint() string { return "a GitHub issue or pull request URL" }

// Resolve is the thread of the issue or pull request ref names, if its
// account is of organisation.
func (r Refs) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	ir, ok := ParseIssueURL(ref)
	if !ok {
		if ir, ok = parseShortRef(ref); !ok {
			return nil, thread.ErrNotFound
		}
	}
	return r.Store.ThreadByGitHubIssue(ctx, ir.Owner, ir.Repo, ir.Number, organisation)
}

// shortRef is owner/repo#number, as GitHub writes a reference across
// repositories.
var shortRef = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})#([0-9]{1,9})$`)

func parseShortRef(s string) (IssueRef, bool) {
	m := shortRef.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return IssueRef{}, false
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n <= 0 {
		return IssueRef{}, false
	}
	return IssueRef{Owner: m[1], Repo: m[2], Number: n}, true
}

// Hint is what people type to name one of GitHub's conversations.
func (a *App) Hint() string { return Refs{}.Hint() }

// Resolve finds the thread an issue's or pull request's URL names, for
// continuing it elsewhere; it works with GitHub off.
func (a *App) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	return Refs{Store: a.store}.Resolve(ctx, ref, organisation)
}

// Origin labels a GitHub thread by its issue or pull request (acme/api#12)
// and links to it, or is thread.ErrNotFound for a thread not on GitHub.
func (a *App) Origin(ctx context.Context, threadID uuid.UUID) (label, url string, err error) {
	att, err := a.store.GitHubAttachment(ctx, threadID)
	if err != nil {
		return "", "", err
	}
	return att.Owner + "/" + att.Repo + "#" + strconv.Itoa(att.Number), IssueURL(a.webURL(), att), nil
}

// IssueURL is the web address of the issue or pull request att is on
// (or of its review thread's first comment), under web, GitHub's site.
func IssueURL(web string, att *thread.GitHubAttachment) string {
	kind := "issues"
	if att.PullRequest {
		kind = "pull"
	}
	u := strings.TrimSuffix(web, "/") + "/" + att.Owner + "/" + att.Repo + "/" + kind + "/" + strconv.Itoa(att.Number)
	if att.ReviewRoot != 0 {
		u += "#discussion_r" + strconv.FormatInt(att.ReviewRoot, 10)
	}
	return u
}

// webURL is GitHub's site for the API the app calls: github.com for
// api.github.com (or no API URL), and for GitHub Enterprise Server
// (https://HOST/api/v3) its host.
func (a *App) webURL() string {
	api := strings.TrimSuffix(a.cfg.APIURL, "/")
	switch {
	case api == "" || strings.EqualFold(api, "https://api.github.com"):
		return "https://github.com"
	case strings.HasSuffix(api, "/api/v3"):
		return strings.TrimSuffix(api, "/api/v3")
	}
	return "https://github.com"
}
