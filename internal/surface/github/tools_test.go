package github_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// TestGitHubTools: get_github_issue and search_github_issues read only
// the repositories the installations of the conversation's organisation
// grant: a GitHub conversation its own account's, a Slack one linked to
// that account the same, an unlinked one none, the operator's every one;
// a repository outside the grant or of another organisation is refused
// with a tool error naming what is in reach.
func TestGitHubTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := githubtest.NewServer(t)
	bob := githubtest.User{ID: 501, Login: "bob", Type: "User"}
	acmeID, globexID := rand.Int64N(1<<40)+1, rand.Int64N(1<<40)+1
	acme := githubtest.User{ID: acmeID, Login: "acme", Type: "Organization"}
	globex := githubtest.User{ID: globexID, Login: "globex", Type: "Organization"}
	acmeInst := gh.Install(acme, "acme/api", "acme/web")
	globexInst := gh.Install(globex, "globex/core")
	flaky := gh.AddIssue("acme/api", bob, "Flaky login test", "It fails on Tuesdays", false)
	gh.AddComment("acme/api", flaky, bob, "seen again today")
	pr := gh.AddIssue("acme/web", bob, "Faster pages", "Cache them", true)
	gh.Update("acme/web", pr, func(is *githubtest.Issue) {
		is.Files = []githubtest.File{{Path: "page.go", Status: "modified", Additions: 4, Deletions: 2}}
	})
	secret := gh.AddIssue("acme/secret", bob, "Flaky secret", "not granted", false) // a repository the app is not granted
	theirs := gh.AddIssue("globex/core", bob, "Flaky core", "another organisation's", false)

	store := dbtest.NewStore(t)
	require.NoError(t, store.UpsertGitHubInstallation(ctx, db.GitHubInstallation{ID: acmeInst, AccountID: acmeID, AccountLogin: "acme"}))
	require.NoError(t, store.UpsertGitHubInstallation(ctx, db.GitHubInstallation{ID: globexInst, AccountID: globexID, AccountLogin: "globex"}))
	onGitHub, err := thread.NewBuilder(nil).WithGoal("flaky").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: acmeInst,
		AccountID: acmeID, RepoID: rand.Int64N(1<<40) + 1, Owner: "acme", Repo: "api", Number: flaky, CreatedBy: "bob"}).Build(ctx, store)
	require.NoError(t, err)
	team := "T" + strconv.FormatUint(rand.Uint64N(1<<40), 36)
	onSlack, err := thread.NewBuilder(nil).WithGoal("chat").InteractiveSlack(&thread.SlackAttachment{TeamID: team, ChannelID: "C1",
		ThreadTS: "1700000000.000100", CreatedBy: "U1"}).Build(ctx, store)
	require.NoError(t, err)
	unlinked, err := thread.NewBuilder(nil).WithGoal("chat").InteractiveSlack(&thread.SlackAttachment{TeamID: team + "X", ChannelID: "C1",
		ThreadTS: "1700000000.000200", CreatedBy: "U1"}).Build(ctx, store)
	require.NoError(t, err)
	operator := dbtest.Thread(ctx, t, store, nil)
	// An installation weft never heard the installation event of, known
	// by the thread one of its deliveries opened.
	initechID := rand.Int64N(1<<40) + 1
	initechInst := gh.Install(githubtest.User{ID: initechID, Login: "initech", Type: "Organization"}, "initech/tps")
	report := gh.AddIssue("initech/tps", bob, "TPS reports", "new cover sheet", false)
	onInitech, err := thread.NewBuilder(nil).WithGoal("tps").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: initechInst,
		AccountID: initechID, RepoID: rand.Int64N(1<<40) + 1, Owner: "initech", Repo: "tps", Number: report, CreatedBy: "bob"}).Build(ctx, store)
	require.NoError(t, err)
	require.NoError(t, store.LinkTenants(ctx, "acme-"+team[1:], thread.GitHubTenant(acmeID), thread.SlackTenant(team)))

	client, err := githubapi.New(githubapi.Deps{AppID: githubtest.AppID, PrivateKey: gh.PrivateKeyPEM(), Slug: githubtest.AppSlug, APIURL: gh.URL()})
	require.NoError(t, err)
	ts := map[string]tools.Tool{}
	for _, tl := range (&surfacegithub.Tools{Client: client, Store: store, Grants: &surfacegithub.Grants{Client: client},
		Logger: slog.New(slog.DiscardHandler)}).List() {
		ts[tl.Name] = tl
	}
	call := func(from uuid.UUID, tool string, args map[string]any) (string, error) {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		return ts[tool].Handler(ctx, tools.Call{ThreadID: from, Arguments: b})
	}
	issue := func(repo string, n int) map[string]any { return map[string]any{"repository": repo, "number": n} }

	for _, tt := range []struct {
		name    string
		from    uuid.UUID
		tool    string
		args    map[string]any
		want    []string
		refused string
		absent  []string
	}{
		{name: "OwnIssue", from: onGitHub.ID, tool: "get_github_issue", args: issue("acme/api", flaky),
			want: []string{`<github_issue repository="acme/api"`, "Flaky login test", "It fails on Tuesdays", "seen again today"}},
		{name: "ByURL", from: onGitHub.ID, tool: "get_github_issue", args: map[string]any{"url": "https://github.com/acme/web/pull/" + strconv.Itoa(pr) + "/files"},
			want: []string{"<github_pull_request", "Faster pages", `<file path="page.go"`}},
		{name: "ShortRef", from: onGitHub.ID, tool: "get_github_issue", args: map[string]any{"repository": "ACME/API#" + strconv.Itoa(flaky)},
			want: []string{"Flaky login test"}},
		{name: "NotGranted", from: onGitHub.ID, tool: "get_github_issue", args: issue("acme/secret", secret),
			refused: `repository "acme/secret" is out of reach`, want: []string{"acme/api, acme/web"}},
		{name: "OtherOrganisation", from: onGitHub.ID, tool: "get_github_issue", args: issue("globex/core", theirs),
			refused: `repository "globex/core" is out of reach`},
		{name: "Missing", from: onGitHub.ID, tool: "get_github_issue", args: issue("acme/api", 999), refused: "acme/api#999 does not exist"},
		{name: "LinkedSlack", from: onSlack.ID, tool: "get_github_issue", args: issue("acme/api", flaky), want: []string{"Flaky login test"}},
		{name: "LinkedSlackOtherOrganisation", from: onSlack.ID, tool: "get_github_issue", args: issue("globex/core", theirs),
			refused: "out of reach"},
		{name: "UnlinkedSlack", from: unlinked.ID, tool: "get_github_issue", args: issue("acme/api", flaky),
			refused: "no GitHub repository is in reach of this conversation"},
		{name: "Operator", from: operator.ID, tool: "get_github_issue", args: issue("globex/core", theirs), want: []string{"Flaky core"}},
		{name: "Search", from: onGitHub.ID, tool: "search_github_issues", args: map[string]any{"query": "flaky repo:globex/core"},
			want: []string{"- acme/api#" + strconv.Itoa(flaky) + " (issue, open) Flaky login test"}, absent: []string{"globex", "secret"}},
		{name: "SearchOneRepository", from: onSlack.ID, tool: "search_github_issues", args: map[string]any{"query": "faster", "repository": "acme/web"},
			want: []string{"acme/web#" + strconv.Itoa(pr) + " (pull request, open) Faster pages"}},
		{name: "SearchOtherRepository", from: onSlack.ID, tool: "search_github_issues", args: map[string]any{"query": "flaky", "repository": "globex/core"},
			refused: `repository "globex/core" is out of reach`},
		{name: "SearchOperator", from: operator.ID, tool: "search_github_issues", args: map[string]any{"query": "flaky"},
			want: []string{"acme/api#", "globex/core#"}, absent: []string{"secret"}},
		{name: "KnownByItsThreads", from: onInitech.ID, tool: "get_github_issue", args: issue("initech/tps", report), want: []string{"TPS reports"}},
		{name: "KnownByItsThreadsNotOthers", from: onInitech.ID, tool: "get_github_issue", args: issue("acme/api", flaky), refused: "out of reach"},
		{name: "OperatorReadsEveryInstallation", from: operator.ID, tool: "search_github_issues", args: map[string]any{"query": "report"},
			want: []string{"initech/tps#"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(tt.from, tt.tool, tt.args)
			if tt.refused != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.refused)
				for _, w := range tt.want {
					require.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			for _, w := range tt.want {
				require.Contains(t, got, w)
			}
			for _, a := range tt.absent {
				require.NotContains(t, got, a)
			}
		})
	}

	// The grants are read once per installation, not per call.
	lists := 0
	for _, c := range gh.Calls() {
		if c.Route == "GET /installation/repositories" {
			lists++
		}
	}
	require.Equal(t, 3, lists, "one listing per installation")
}
