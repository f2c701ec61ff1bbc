package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/thread"
)

// example is a vendored webhook example, with the fields its mapping is
// checked by.
type example struct {
	file, event string
	body        []byte
	raw         struct {
		Action       string `json:"action"`
		Installation *struct {
			ID      int64 `json:"id"`
			Account *struct {
				ID    int64  `json:"id"`
				Login string `json:"login"`
			} `json:"account"`
		} `json:"installation"`
		Repository struct {
			ID    int64  `json:"id"`
			Name  string `json:"name"`
			Owner struct {
				ID    int64  `json:"id"`
				Login string `json:"login"`
			} `json:"owner"`
		} `json:"repository"`
		Issue *struct {
			Number int `json:"number"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
		Comment *struct {
			ID        int64  `json:"id"`
			Body      string `json:"body"`
			InReplyTo int64  `json:"in_reply_to_id"`
		} `json:"comment"`
	}
}

// examples are the vendored examples of event, in the package's order.
func examples(t *testing.T, event string) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "github", "testdata", "webhooks", event, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []example
	for _, f := range files {
		e := example{file: event + "/" + filepath.Base(f), event: event}
		e.body, err = os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(e.body, &e.raw))
		out = append(out, e)
	}
	return out
}

// TestGitHubWebhookExamples delivers every payload example GitHub's
// community publishes for the events weft subscribes to
// (internal/github/testdata) through `weft serve`'s door, unchanged and
// signed as GitHub signs: each is accepted and recorded in the ledger, and
// mapped. Most come from repository webhooks and name no installation:
// they are no app's, and are recorded as ignored, as are issue events that
// neither assign nor mention the app. The comments of installation 1 reach
// the conversations weft holds on that issue and review thread: a comment
// is kept, an edit and a deletion change it, and the same comment created
// twice is kept once. Installation events keep the installations table.
func TestGitHubWebhookExamples(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()

	// weft's conversations on the examples' issue and review thread.
	const owner, repoName, ownerID, repoID = "Codertocat", "Hello-World", 21031067, 186853002
	var reviewRoot int64 = 284312630
	issue, err := thread.NewBuilder(nil).WithGoal("examples' issue").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: 1,
		AccountID: ownerID, RepoID: repoID, Owner: owner, Repo: repoName, Number: 1, CreatedBy: "octocat"}).Build(ctx, w.store)
	require.NoError(t, err)
	review, err := thread.NewBuilder(nil).WithGoal("examples' review thread").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: 1,
		AccountID: ownerID, RepoID: repoID, Owner: owner, Repo: repoName, Number: 2, PullRequest: true, ReviewRoot: reviewRoot,
		CreatedBy: "octocat"}).Build(ctx, w.store)
	require.NoError(t, err)

	created := map[string]bool{}
	want := func(e example) string {
		switch e.event {
		case githubapi.EventIssueComment, githubapi.EventReviewComment:
			if e.raw.Installation == nil {
				return string(thread.InboundIgnored)
			}
			key := thread.GitHubCommentID(e.event == githubapi.EventReviewComment, e.raw.Comment.ID)
			if e.raw.Action == "created" && created[key] {
				return "" // the same comment again: nothing written
			}
			created[key] = true
			return string(thread.InboundProcessed)
		case githubapi.EventInstallation:
			if e.raw.Action == "deleted" {
				return string(thread.InboundProcessed) // the account's tenant is revoked
			}
		}
		return string(thread.InboundIgnored)
	}
	var delivered int
	for _, ev := range []string{githubapi.EventIssueComment, githubapi.EventReviewComment, githubapi.EventIssues,
		githubapi.EventInstallationRepositories, githubapi.EventInstallation} {
		for _, e := range examples(t, ev) {
			delivered++
			d := w.gh.DeliverBody(e.event, e.body)
			require.NoError(t, d.Err)
			require.Equal(t, http.StatusOK, d.Status, e.file)
			var outcome string
			err := w.store.Pool().QueryRow(ctx, "SELECT outcome FROM webhook_deliveries WHERE platform = 'github' AND delivery_id = $1 AND event_type = $2",
				d.ID, e.event).Scan(&outcome)
			if !errors.Is(err, pgx.ErrNoRows) {
				require.NoError(t, err)
			}
			require.Equal(t, want(e), outcome, e.file)
			if e.event == githubapi.EventInstallation && e.raw.Action == "created" {
				var login string
				var removed bool
				require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT account_login, removed_at IS NOT NULL FROM github_installations WHERE installation_id = $1 AND account_id = $2",
					e.raw.Installation.ID, e.raw.Installation.Account.ID).Scan(&login, &removed))
				require.Equal(t, e.raw.Installation.Account.Login, login, e.file)
				require.False(t, removed, e.file)
			}
		}
	}
	require.Equal(t, 53, delivered, "every vendored example")

	// What the comments of installation 1 left in weft's conversations.
	last := func(event, action string) example {
		var out example
		for _, e := range examples(t, event) {
			if e.raw.Installation != nil && e.raw.Action == action {
				out = e
			}
		}
		require.NotEmpty(t, out.file, "%s %s", event, action)
		return out
	}
	s, err := w.store.StitchByExternalID(ctx, thread.PlatformGitHub, thread.GitHubCommentID(false, last(githubapi.EventIssueComment, "created").raw.Comment.ID))
	require.NoError(t, err)
	require.Equal(t, issue.ID, s.ThreadID)
	require.Equal(t, thread.StitchGitHubMessage, s.Type)
	require.Equal(t, last(githubapi.EventIssueComment, "created").raw.Comment.Body, s.Content)
	require.True(t, s.DeletedAt.IsZero())
	s, err = w.store.StitchByExternalID(ctx, thread.PlatformGitHub, thread.GitHubCommentID(true, reviewRoot))
	require.NoError(t, err)
	require.Equal(t, review.ID, s.ThreadID)
	require.Equal(t, last(githubapi.EventReviewComment, "edited").raw.Comment.Body, s.Content)
	require.False(t, s.DeletedAt.IsZero(), "deleted, then edited: still deleted")
	require.Zero(t, w.llm.Calls(), "no example mentions the app: nothing is answered")
}
