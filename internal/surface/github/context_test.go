package github_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	"github.com/weft-dev/weft/internal/thread"
)

type attachments map[uuid.UUID]*thread.GitHubAttachment

func (a attachments) GitHubAttachment(_ context.Context, id uuid.UUID) (*thread.GitHubAttachment, error) {
	if g, ok := a[id]; ok {
		return g, nil
	}
	return nil, thread.ErrNotFound
}

// TestContextPrompt: a GitHub thread's prompt shows its pull request, with
// the review thread's file diff; a thread elsewhere, or one whose read
// fails, gets nothing.
func TestContextPrompt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t)
	c, err := githubapi.New(githubapi.Deps{AppID: githubtest.AppID, PrivateKey: r.gh.PrivateKeyPEM(), Slug: githubtest.AppSlug, APIURL: r.gh.URL()})
	require.NoError(t, err)
	pr := r.gh.AddIssue("acme/api", r.bob, "Speed up", "Makes it faster", true)
	r.gh.Update("acme/api", pr, func(is *githubtest.Issue) {
		is.Files = []githubtest.File{{Path: "main.go", Status: "modified", Additions: 3, Deletions: 1, Patch: "@@ -1 +1 @@\n-slow\n+fast"}}
	})
	root := r.gh.AddReviewComment("acme/api", pr, r.bob, "main.go", "@weft-test safe?", 0)
	r.gh.AddComment("acme/api", pr, r.bob, "looks good overall")

	onPR, onReview, elsewhere, gone := thread.NewID(), thread.NewID(), thread.NewID(), thread.NewID()
	att := &thread.GitHubAttachment{InstallationID: r.inst, RepoID: 1, Owner: "acme", Repo: "api", Number: pr, PullRequest: true}
	review := *att
	review.ReviewRoot = root.ID
	missing := *att
	missing.Number = 999
	p := surfacegithub.Context{Client: c, Logger: slog.New(slog.DiscardHandler),
		Store: attachments{onPR: att, onReview: &review, gone: &missing}}

	got := p.PromptSections(ctx, &thread.Thread{ID: onPR}, nil)
	require.Len(t, got, 1)
	require.Contains(t, got[0], "<github_pull_request")
	require.Contains(t, got[0], "Makes it faster")
	require.Contains(t, got[0], "looks good overall")
	require.Contains(t, got[0], `<file path="main.go"`)
	require.NotContains(t, got[0], "<diff")

	got = p.PromptSections(ctx, &thread.Thread{ID: onReview}, nil)
	require.Len(t, got, 1)
	require.Contains(t, got[0], `<diff path="main.go"`)
	require.Contains(t, got[0], "+fast")

	require.Empty(t, p.PromptSections(ctx, &thread.Thread{ID: elsewhere}, nil))
	require.Empty(t, p.PromptSections(ctx, &thread.Thread{ID: gone}, nil))
}
