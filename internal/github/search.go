package github

import (
	"context"
	"errors"
	"regexp"
	"strings"

	gh "github.com/google/go-github/v93/github"

	"github.com/weft-dev/weft/internal/surface"
)

// searchQueryLimit is GitHub's limit on a search query's length.
const searchQueryLimit = 256

// scopeQualifier matches the qualifiers that choose where GitHub searches:
// a query from the model may not widen its own scope.
var scopeQualifier = regexp.MustCompile(`(?i)(^|\s)-?(repo|org|user|owner|repository_id):\S*`)

// SearchIssues searches issues and pull requests in repos only (each
// "owner/name"), at most limit of them, best match first. The query's own
// repo:, org: and user: qualifiers are dropped; the repositories become
// repo: qualifiers (or one org: when they all share an owner and the
// query would exceed GitHub's 256 characters), and results outside repos
// are dropped whatever GitHub answers.
func (c *Client) SearchIssues(ctx context.Context, inst int64, query string, repos []Repo, limit int) ([]Issue, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, err
	}
	q, ok := scopedQuery(query, repos)
	if !ok {
		return nil, &surface.Error{Platform: platform, Op: "search_issues", Kind: surface.KindInvalid,
			Err: errors.New("the repositories do not fit in one query")}
	}
	allowed := map[string]bool{}
	for _, r := range repos {
		allowed[strings.ToLower(r.FullName())] = true
	}
	limit = min(max(limit, 1), 100)
	res, _, err := in.client.Search.Issues(ctx, q, &gh.SearchOptions{ListOptions: gh.ListOptions{PerPage: limit}})
	if err != nil {
		return nil, translate(ctx, "search_issues", err)
	}
	var out []Issue
	for _, i := range res.Issues {
		x := issueOf(i)
		if allowed[strings.ToLower(x.Repo.FullName())] && len(out) < limit {
			out = append(out, *x)
		}
	}
	return out, nil
}

// scopedQuery is query limited to repos, and whether it fits GitHub's
// length limit. No repositories is no scope, which is refused.
func scopedQuery(query string, repos []Repo) (string, bool) {
	if len(repos) == 0 {
		return "", false
	}
	base := strings.Join(strings.Fields(scopeQualifier.ReplaceAllString(query, " ")), " ")
	var b strings.Builder
	b.WriteString(base)
	for _, r := range repos {
		b.WriteString(" repo:" + r.FullName())
	}
	if q := strings.TrimSpace(b.String()); len(q) <= searchQueryLimit {
		return q, true
	}
	owner := repos[0].Owner
	for _, r := range repos {
		if !strings.EqualFold(r.Owner, owner) {
			return "", false
		}
	}
	q := strings.TrimSpace(base + " org:" + owner)
	return q, len(q) <= searchQueryLimit
}
