package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/toolschema"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// grantTTL is how long an installation's list of repositories is kept: an
// installation_repositories delivery drops it at once on the replica that
// receives it, the others see the change within this.
const grantTTL = 5 * time.Minute

// What get_github_issue shows of an issue: less than a turn's own
// context, since a model may read several.
var toolBudgets = githubapi.Budgets{Comments: 6000, Files: 30}

// search_github_issues' limits.
const (
	searchDefault = 10
	searchMost    = 30
	// reachNames is how many reachable repositories a refusal names.
	reachNames = 20
)

// ToolStore is what the GitHub tools read of a conversation: its
// organisation, its own GitHub attachment, and the installations of its
// organisation. *db.Store implements it.
type ToolStore interface {
	ThreadTenant(ctx context.Context, threadID uuid.UUID) (thread.Tenant, string, error)
	GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error)
	GitHubInstallationsOf(ctx context.Context, organisation string) ([]db.GitHubInstallation, error)
}

// Grants is the repositories each installation grants the app, read from
// GitHub and kept for grantTTL.
type Grants struct {
	Client *githubapi.Client
	cache  ttlcache.Cache[[]githubapi.Repo]

	mu      sync.Mutex
	dropped map[int64]time.Time // installation → when its grant changed
}

// Repositories is what installation inst grants.
func (g *Grants) Repositories(ctx context.Context, inst int64) ([]githubapi.Repo, error) {
	key := strconv.FormatInt(inst, 10)
	start := time.Now()
	if rs, ok := g.cache.Get(key, start); ok {
		return rs, nil
	}
	rs, err := g.Client.Repositories(ctx, inst)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	changed := g.dropped[inst]
	g.mu.Unlock()
	if changed.Before(start) { // else a change came in while reading: keep nothing
		g.cache.Put(key, rs, start, grantTTL)
	}
	return rs, nil
}

// Drop forgets what installation inst grants: it changed.
func (g *Grants) Drop(inst int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dropped == nil {
		g.dropped = map[int64]time.Time{}
	}
	now := time.Now()
	for id, at := range g.dropped { // bounded: only recent changes matter
		if now.Sub(at) > grantTTL {
			delete(g.dropped, id)
		}
	}
	g.dropped[inst] = now
	// A later Get at or after now misses: Put a zero-length entry that
	// expires at once.
	g.cache.Put(strconv.FormatInt(inst, 10), nil, now, 0)
}

// Tools serves get_github_issue and search_github_issues. Each reads only
// the repositories weft's GitHub App is granted by the installations of
// the conversation's organisation (its account's tenant, linked with
// `weft tenant link` or its own) and the installation of the
// conversation's own issue; a conversation on no platform is the
// operator's and reads through every installation.
type Tools struct {
	Client *githubapi.Client
	Store  ToolStore
	Grants *Grants
	Logger *slog.Logger
}

// List is get_github_issue and search_github_issues.
func (t *Tools) List() []tools.Tool { return []tools.Tool{t.getIssueTool(), t.searchTool()} }

type (
	getIssueArgs struct {
		Repository string `json:"repository,omitempty" jsonschema:"The repository, owner/name (with number), unless url is given"`
		Number     int    `json:"number,omitempty" jsonschema:"The issue or pull request number, unless url is given"`
		URL        string `json:"url,omitempty" jsonschema:"The issue or pull request's URL, instead of repository and number"`
	}
	searchArgs struct {
		Query      string `json:"query" jsonschema:"GitHub search text: keywords and qualifiers such as is:open, is:pr, label:bug, author:NAME"`
		Repository string `json:"repository,omitempty" jsonschema:"Search only this repository, owner/name; default every repository this conversation may read"`
		Limit      int    `json:"limit,omitempty" jsonschema:"Max results (default 10, max 30)"`
	}
)

func (t *Tools) getIssueTool() tools.Tool {
	return tools.Tool{
		Name: "get_github_issue",
		Description: "Read a GitHub issue or pull request: title, state, labels, body, its newest comments and, for a pull request, " +
			"its changed files. Only repositories weft's GitHub App is installed on for this conversation's organisation can be read.",
		Schema: toolschema.For[getIssueArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[getIssueArgs](c)
			if err != nil {
				return "", err
			}
			owner, name, number, err := issueNamed(args)
			if err != nil {
				return "", err
			}
			in, repo, err := t.find(ctx, c.ThreadID, owner+"/"+name)
			if err != nil {
				return "", err
			}
			x, err := t.Client.ReadContext(ctx, in, repo, number, toolBudgets, "")
			if surface.IsKind(err, surface.KindNotFound) {
				return "", fmt.Errorf("%s#%d does not exist", repo.FullName(), number)
			}
			if err != nil {
				return "", fmt.Errorf("read %s#%d: %w", repo.FullName(), number, err)
			}
			return x.Prompt(), nil
		},
	}
}

func (t *Tools) searchTool() tools.Tool {
	return tools.Tool{
		Name: "search_github_issues",
		Description: "Search GitHub issues and pull requests, best match first, in the repositories weft's GitHub App is installed on " +
			"for this conversation's organisation (or one of them). Read one in full with get_github_issue.",
		Schema: toolschema.For[searchArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[searchArgs](c)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(args.Query) == "" {
				return "", errors.New("query is required")
			}
			limit := args.Limit
			if limit <= 0 {
				limit = searchDefault
			}
			limit = min(limit, searchMost)
			reach, err := t.reach(ctx, c.ThreadID)
			if err != nil {
				return "", err
			}
			if args.Repository != "" {
				in, repo, err := t.pick(reach, args.Repository)
				if err != nil {
					return "", err
				}
				reach = []grant{{inst: in, repos: []githubapi.Repo{repo}}}
			}
			var found []githubapi.Issue
			for _, g := range reach {
				if len(found) >= limit || len(g.repos) == 0 {
					continue
				}
				is, err := t.Client.SearchIssues(ctx, g.inst, args.Query, g.repos, limit-len(found))
				if err != nil {
					return "", fmt.Errorf("search GitHub: %w", err)
				}
				found = append(found, is...)
			}
			if len(found) == 0 {
				return fmt.Sprintf("No GitHub issues or pull requests found for %q", args.Query), nil
			}
			lines := make([]string, len(found))
			for i, is := range found {
				lines[i] = searchLine(is)
			}
			return strings.Join(lines, "\n"), nil
		},
	}
}

// searchLine is one search result: where, what, state, title, labels, link.
func searchLine(is githubapi.Issue) string {
	kind := "issue"
	if is.PullRequest {
		kind = "pull request"
	}
	line := fmt.Sprintf("- %s#%d (%s, %s) %s", is.Repo.FullName(), is.Number, kind, is.State, strings.Join(strings.Fields(is.Title), " "))
	if len(is.Labels) > 0 {
		line += " [" + strings.Join(is.Labels, ", ") + "]"
	}
	if is.URL != "" {
		line += " " + is.URL
	}
	return line
}

// grant is one installation and the repositories it grants.
type grant struct {
	inst  int64
	repos []githubapi.Repo
}

// reach is the installations the conversation of thread id may read
// through, with their repositories: its organisation's, and its own
// issue's. An installation GitHub no longer lets weft use is left out.
func (t *Tools) reach(ctx context.Context, id uuid.UUID) ([]grant, error) {
	_, org, err := t.Store.ThreadTenant(ctx, id)
	if err != nil && !errors.Is(err, thread.ErrNotFound) {
		return nil, err
	}
	ins, err := t.Store.GitHubInstallationsOf(ctx, org)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(ins)+1)
	for _, in := range ins {
		ids = append(ids, in.ID)
	}
	if att, err := t.Store.GitHubAttachment(ctx, id); err == nil {
		if !slices.Contains(ids, att.InstallationID) {
			ids = append(ids, att.InstallationID)
		}
	} else if !errors.Is(err, thread.ErrNotFound) {
		return nil, err
	}
	var out []grant
	for _, in := range ids {
		repos, err := t.Grants.Repositories(ctx, in)
		if surface.IsKind(err, surface.KindForbidden) || surface.IsKind(err, surface.KindNotFound) || surface.IsKind(err, surface.KindAuth) {
			// Uninstalled or suspended since: nothing to read there.
			t.Logger.WarnContext(ctx, "github installation unreadable", slog.Int64("installation_id", in), slog.Any("error", err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the repositories of installation %d: %w", in, err)
		}
		out = append(out, grant{inst: in, repos: repos})
	}
	if len(out) == 0 {
		return nil, errors.New("no GitHub repository is in reach of this conversation: weft's GitHub App is not installed " +
			"for its organisation (an operator links a GitHub account to it with `weft tenant link`)")
	}
	return out, nil
}

// find is the installation through which the conversation of thread id
// may read repository full ("owner/name"), and the repository.
func (t *Tools) find(ctx context.Context, id uuid.UUID, full string) (int64, githubapi.Repo, error) {
	reach, err := t.reach(ctx, id)
	if err != nil {
		return 0, githubapi.Repo{}, err
	}
	return t.pick(reach, full)
}

// pick finds repository full among reach, or refuses it, naming what is
// in reach.
func (t *Tools) pick(reach []grant, full string) (int64, githubapi.Repo, error) {
	full = strings.Trim(strings.TrimSpace(full), "/")
	var names []string
	for _, g := range reach {
		for _, r := range g.repos {
			if strings.EqualFold(r.FullName(), full) {
				return g.inst, r, nil
			}
			names = append(names, r.FullName())
		}
	}
	slices.Sort(names)
	more := ""
	if len(names) > reachNames {
		more = fmt.Sprintf(" and %d more", len(names)-reachNames)
		names = names[:reachNames]
	}
	return 0, githubapi.Repo{}, fmt.Errorf("repository %q is out of reach: weft's GitHub App is not installed on it for this "+
		"conversation's organisation; it may read %s%s", full, strings.Join(names, ", "), more)
}

// issueNamed reads which issue get_github_issue's arguments name.
func issueNamed(a getIssueArgs) (owner, name string, number int, err error) {
	if a.URL != "" {
		ref, ok := ParseIssueURL(a.URL)
		if !ok {
			return "", "", 0, fmt.Errorf("%q is not a GitHub issue or pull request URL", a.URL)
		}
		return ref.Owner, ref.Repo, ref.Number, nil
	}
	full := strings.TrimSpace(a.Repository)
	number = a.Number
	if r, n, ok := strings.Cut(full, "#"); ok && number == 0 { // owner/name#12
		full = r
		number, _ = strconv.Atoi(n)
	}
	owner, name, ok := strings.Cut(strings.Trim(full, "/"), "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", 0, errors.New("repository must be owner/name, or give the url")
	}
	if number <= 0 {
		return "", "", 0, errors.New("number is required: the issue or pull request's number")
	}
	return owner, name, number, nil
}

// IssueRef is an issue or pull request as its URL names it.
type IssueRef struct {
	Owner, Repo string
	Number      int
	PullRequest bool
}

// issuePath is an issue's or pull request's path on github.com (or a
// GitHub Enterprise Server): /OWNER/REPO/issues/N or /OWNER/REPO/pull/N,
// and what follows it (/files, /commits...).
var issuePath = regexp.MustCompile(`^/([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})/(issues|pull|pulls)/([0-9]{1,9})(?:/[a-z]*)?/?$`)

// ParseIssueURL reads an issue's or pull request's URL
// (https://github.com/acme/api/issues/12, .../pull/7/files, with any
// #fragment), on github.com or another host (GitHub Enterprise Server).
// Chat markup's <url> and <url|label> forms are read too.
func ParseIssueURL(s string) (IssueRef, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") {
		s, _, _ = strings.Cut(s[1:len(s)-1], "|")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return IssueRef{}, false
	}
	m := issuePath.FindStringSubmatch(u.Path)
	if m == nil {
		return IssueRef{}, false
	}
	n, err := strconv.Atoi(m[4])
	if err != nil || n <= 0 {
		return IssueRef{}, false
	}
	return IssueRef{Owner: m[1], Repo: m[2], Number: n, PullRequest: m[3] != "issues"}, true
}

// Context gives the agent GitHub's tools: get_github_issue and
// search_github_issues (no discovery source); nothing with GitHub off.
func (a *App) Context(store *db.Store, _ discovery.FastModel, _ *slog.Logger) (discovery.Source, []tools.Tool) {
	if !a.On() {
		return nil, nil
	}
	t := &Tools{Client: a.client, Store: store, Grants: a.grants, Logger: a.logger}
	return nil, t.List()
}
