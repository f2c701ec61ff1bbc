package github_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

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

// TestContextCache: the second model call of a conversation reads nothing
// from GitHub; a delivery about its issue (Changed), or a GitHub comment,
// edit or deletion in its chain that the cached read was not made with,
// makes the next one read it again and see the change.
func TestContextCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t)
	c, err := githubapi.New(githubapi.Deps{AppID: githubtest.AppID, PrivateKey: r.gh.PrivateKeyPEM(), Slug: githubtest.AppSlug, APIURL: r.gh.URL()})
	require.NoError(t, err)
	n := r.gh.AddIssue("acme/api", r.bob, "Flaky", "It fails", false)
	mention := r.gh.AddComment("acme/api", n, r.bob, "@weft-test why?")
	id := thread.NewID()
	att := &thread.GitHubAttachment{InstallationID: r.inst, RepoID: 5, Owner: "acme", Repo: "api", Number: n}
	cache := &surfacegithub.ContextCache{}
	p := surfacegithub.Context{Client: c, Logger: slog.New(slog.DiscardHandler), Store: attachments{id: att}, Cache: cache}
	chain := []thread.Stitch{{Type: thread.StitchInitialPrompt, Source: thread.PlatformGitHub, ExternalID: thread.GitHubCommentID(false, mention.ID)}}

	// reads is how many REST calls one prompt made, and the prompt.
	reads := func(chain []thread.Stitch) (int, string) {
		before := len(r.gh.Calls())
		got := p.PromptSections(ctx, &thread.Thread{ID: id}, chain)
		require.Len(t, got, 1)
		return len(r.gh.Calls()) - before, got[0]
	}
	calls, got := reads(chain)
	require.Positive(t, calls)
	require.Contains(t, got, "why?")
	calls, _ = reads(chain)
	require.Zero(t, calls, "the second call reads nothing")

	// A change GitHub has but weft has not heard of stays unseen...
	r.gh.AddComment("acme/api", n, r.bob, "it is the clock")
	calls, got = reads(chain)
	require.Zero(t, calls)
	require.NotContains(t, got, "it is the clock")
	// ...until its delivery arrives.
	cache.Changed(r.inst, att.RepoID, n)
	calls, got = reads(chain)
	require.Positive(t, calls)
	require.Contains(t, got, "it is the clock")
	calls, _ = reads(chain)
	require.Zero(t, calls)
	cache.Changed(r.inst, att.RepoID, n+1) // another issue's delivery changes nothing here
	calls, _ = reads(chain)
	require.Zero(t, calls)

	// A comment recorded on another replica shows in the chain.
	r.gh.AddComment("acme/api", n, r.bob, "or the timezone")
	more := append(chain, thread.Stitch{Type: thread.StitchGitHubMessage, Source: thread.PlatformGitHub, ExternalID: "issue/999"})
	calls, got = reads(more)
	require.Positive(t, calls)
	require.Contains(t, got, "or the timezone")
	calls, _ = reads(more)
	require.Zero(t, calls)
	edited := append([]thread.Stitch{}, more...)
	edited[1].EditedAt = time.Now()
	calls, _ = reads(edited)
	require.Positive(t, calls, "an edit reads it again")

	// Input from another platform changes nothing on GitHub.
	slack := append(edited, thread.Stitch{Type: thread.StitchSlackMessage, Source: thread.PlatformSlack, ExternalID: "Ev1"})
	calls, _ = reads(slack)
	require.Zero(t, calls)
}
