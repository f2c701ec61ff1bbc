package github_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

// Fixtures every client test shares: one organization, its repositories
// and a person who writes in them.
const (
	repoFull  = "acme/widgets"
	otherFull = "acme/gadgets"
)

var (
	acme  = githubtest.User{ID: 9001, Login: "acme", Type: "Organization"}
	alice = githubtest.User{ID: 7001, Login: "alice", Type: "User"}
	repo  = github.Repo{Owner: "acme", Name: "widgets"}
	other = github.Repo{Owner: "acme", Name: "gadgets"}
)

// setup is a fake GitHub with the app installed on acme/widgets and a
// client pointed at it. The fake checks every request it receives
// against GitHub's OpenAPI description.
func setup(t *testing.T) (*githubtest.Server, *github.Client, int64) {
	t.Helper()
	s := githubtest.NewServer(t)
	inst := s.Install(acme, repoFull)
	return s, newClient(t, s), inst
}

func newClient(t *testing.T, s *githubtest.Server) *github.Client {
	t.Helper()
	c, err := github.New(github.Deps{
		AppID: githubtest.AppID, PrivateKey: s.PrivateKeyPEM(), WebhookSecret: []byte(githubtest.WebhookSecret),
		Slug: githubtest.AppSlug, APIURL: s.URL(), Now: s.Now,
	})
	require.NoError(t, err)
	return c
}

// routeCalls are the calls of route.
func routeCalls(s *githubtest.Server, route string) []githubtest.Call {
	var out []githubtest.Call
	for _, c := range s.Calls() {
		if c.Route == route {
			out = append(out, c)
		}
	}
	return out
}

// Routes of the calls tests count, as the fake names them.
const (
	routeToken         = "POST /app/installations/{installation_id}/access_tokens"
	routeGetIssue      = "GET /repos/{owner}/{repo}/issues/{issue_number}"
	routeListComments  = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
	routeCreateComment = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	routeCreateReply   = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
