package github_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
)

// TestWebhookExamples parses every payload example GitHub's community
// publishes for the events weft subscribes to (testdata/README.md) and
// checks what it maps against the raw JSON.
func TestWebhookExamples(t *testing.T) {
	t.Parallel()
	_, c, _ := setup(t)
	files, err := filepath.Glob("testdata/webhooks/*/*.json")
	require.NoError(t, err)
	events := map[string]int{}
	for _, f := range files {
		events[filepath.Base(filepath.Dir(f))]++
	}
	// The five events, each with every example the package has.
	require.Equal(t, map[string]int{"issue_comment": 9, "issues": 29, "pull_request_review_comment": 5,
		"installation": 7, "installation_repositories": 3}, events)
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name+"/"+filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			var raw payload
			require.NoError(t, json.Unmarshal(body, &raw))
			ev, err := c.Parse(name, "delivery-"+filepath.Base(f), body)
			require.NoError(t, err)
			require.Equal(t, "delivery-"+filepath.Base(f), ev.Delivery)
			require.Equal(t, name, ev.Name)
			require.Equal(t, raw.Action, ev.Action)
			require.Equal(t, raw.Installation.ID, ev.Installation)
			require.Equal(t, raw.Sender.Login, ev.Sender.Login)
			require.NotEmpty(t, ev.Sender.Login)
			checkMapped(t, name, raw, ev)
		})
	}
}

// payload is the raw example, for the fields checked.
type payload struct {
	Action       string `json:"action"`
	Installation struct {
		ID      int64 `json:"id"`
		Account struct {
			ID    int64  `json:"id"`
			Login string `json:"login"`
		} `json:"account"`
	} `json:"installation"`
	Sender     struct{ Login string } `json:"sender"`
	Repository struct {
		ID       int64  `json:"id"`
		FullName string `json:"full_name"`
	} `json:"repository"`
	Issue struct {
		Number      int             `json:"number"`
		Title       string          `json:"title"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	PullRequest struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Comment struct {
		ID        int64  `json:"id"`
		Body      string `json:"body"`
		InReplyTo int64  `json:"in_reply_to_id"`
		Path      string `json:"path"`
	} `json:"comment"`
	Assignee *struct{ Login string } `json:"assignee"`
	Added    []struct {
		FullName string `json:"full_name"`
	} `json:"repositories_added"`
	Removed []struct {
		FullName string `json:"full_name"`
	} `json:"repositories_removed"`
	Repositories []struct {
		FullName string `json:"full_name"`
	} `json:"repositories"`
}

func checkMapped(t *testing.T, name string, raw payload, ev github.Event) {
	t.Helper()
	commentIntent := map[string]github.Intent{"created": github.IntentComment, "edited": github.IntentEdited, "deleted": github.IntentDeleted}
	switch name {
	case github.EventIssueComment, github.EventReviewComment:
		require.Equal(t, raw.Repository.FullName, ev.Repo.FullName())
		require.Equal(t, raw.Repository.ID, ev.Repo.ID)
		require.Equal(t, raw.Comment.ID, ev.Comment.ID)
		require.Equal(t, raw.Comment.Body, ev.Comment.Body)
		require.NotEmpty(t, ev.Comment.Author.Login)
		// None of the examples mentions this app, nor was written by it.
		require.False(t, ev.FromApp)
		require.Equal(t, commentIntent[raw.Action], ev.Intent)
		if name == github.EventIssueComment {
			require.Equal(t, raw.Issue.Number, ev.Issue.Number)
			require.Equal(t, len(raw.Issue.PullRequest) > 0, ev.Issue.PullRequest)
			require.False(t, ev.Comment.Review)
		} else {
			require.Equal(t, raw.PullRequest.Number, ev.Issue.Number)
			require.True(t, ev.Issue.PullRequest)
			require.True(t, ev.Comment.Review)
			require.Equal(t, raw.Comment.Path, ev.Comment.Path)
			require.Equal(t, raw.Comment.InReplyTo, ev.Comment.InReplyTo)
			require.NotZero(t, ev.Comment.ThreadRoot())
		}
	case github.EventIssues:
		require.Equal(t, raw.Repository.FullName, ev.Repo.FullName())
		require.Equal(t, raw.Issue.Number, ev.Issue.Number)
		require.Equal(t, raw.Issue.Title, ev.Issue.Title)
		if raw.Assignee != nil {
			require.Equal(t, raw.Assignee.Login, ev.Assignee.Login)
		}
		// Assigned to people, opened without mentioning this app.
		require.Equal(t, github.IntentIgnore, ev.Intent)
	case github.EventInstallation:
		require.Equal(t, raw.Installation.Account.ID, ev.Account.ID)
		require.Equal(t, raw.Installation.Account.Login, ev.Account.Login)
		require.Equal(t, fullNames(raw.Repositories), repoNames(ev.Added))
		require.Equal(t, map[string]github.Intent{"created": github.IntentInstalled, "deleted": github.IntentUninstalled,
			"suspend": github.IntentSuspended, "unsuspend": github.IntentUnsuspended,
			"new_permissions_accepted": github.IntentRepositories}[raw.Action], ev.Intent)
	case github.EventInstallationRepositories:
		require.Equal(t, raw.Installation.Account.Login, ev.Account.Login)
		require.Equal(t, fullNames(raw.Added), repoNames(ev.Added))
		require.Equal(t, fullNames(raw.Removed), repoNames(ev.Removed))
		for _, r := range append(ev.Added, ev.Removed...) {
			require.NotZero(t, r.ID)
			require.NotEmpty(t, r.Owner)
		}
		require.Equal(t, github.IntentRepositories, ev.Intent)
	default:
		t.Fatalf("no checks for %s", name)
	}
}

func fullNames(xs []struct {
	FullName string `json:"full_name"`
}) string {
	var out []string
	for _, x := range xs {
		out = append(out, x.FullName)
	}
	return strings.Join(out, ",")
}

func repoNames(rs []github.Repo) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.FullName())
	}
	return strings.Join(out, ",")
}
