package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

func TestGetIssue(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	n := s.AddIssue(repoFull, alice, "Broken widget", "It broke.", false)
	s.Update(repoFull, n, func(is *githubtest.Issue) { is.Labels = []string{"bug", "p1"}; is.State = "closed" })
	got, err := c.GetIssue(ctx, inst, repo, n)
	require.NoError(t, err)
	require.Equal(t, "Broken widget", got.Title)
	require.Equal(t, "It broke.", got.Body)
	require.Equal(t, "closed", got.State)
	require.Equal(t, []string{"bug", "p1"}, got.Labels)
	require.Equal(t, "alice", got.Author.Login)
	require.False(t, got.PullRequest)
	require.Equal(t, repo.FullName(), got.Repo.FullName())

	pr := s.AddIssue(repoFull, alice, "Add widgets", "Adds them.", true)
	s.Update(repoFull, pr, func(is *githubtest.Issue) { is.Merged = true })
	got, err = c.GetIssue(ctx, inst, repo, pr)
	require.NoError(t, err)
	require.True(t, got.PullRequest)
	require.True(t, got.Merged)
}

// TestComments: the newest comments within the budget, oldest first,
// across pages read from the last one back.
func TestComments(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	s.SetPageSize(3)
	n := s.AddIssue(repoFull, alice, "Chatty", "", false)
	for i := range 10 {
		s.AddComment(repoFull, n, alice, strings.Repeat(string(rune('a'+i)), 10))
	}
	got, truncated, err := c.Comments(ctx, inst, repo, n, 45)
	require.NoError(t, err)
	require.True(t, truncated)
	require.Len(t, got, 4)
	require.Equal(t, strings.Repeat("g", 10), got[0].Body)
	require.Equal(t, strings.Repeat("j", 10), got[3].Body)

	got, truncated, err = c.Comments(ctx, inst, repo, n, 1000)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Len(t, got, 10)
	require.Equal(t, strings.Repeat("a", 10), got[0].Body)

	// A newest comment longer than the budget is kept, cut.
	got, truncated, err = c.Comments(ctx, inst, repo, n, 4)
	require.NoError(t, err)
	require.True(t, truncated)
	require.Equal(t, []string{"jjjj"}, []string{got[0].Body})

	empty := s.AddIssue(repoFull, alice, "Quiet", "", false)
	got, truncated, err = c.Comments(ctx, inst, repo, empty, 100)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Empty(t, got)
}

func TestFilesAndDiff(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	s.SetPageSize(2)
	pr := s.AddIssue(repoFull, alice, "Add widgets", "", true)
	patch := "@@ -1,2 +1,3 @@\n package widget\n+// Widget spins.\n+type Widget struct{}\n"
	s.Update(repoFull, pr, func(is *githubtest.Issue) {
		is.Files = []githubtest.File{
			{Path: "a.go", Status: "modified", Additions: 2, Patch: patch},
			{Path: "b.go", Status: "added", Additions: 10},
			{Path: "c.go", Status: "removed", Deletions: 4, Patch: "@@ -1,4 +0,0 @@\n-x\n-y\n-z\n-w\n"},
		}
	})
	files, err := c.Files(ctx, inst, repo, pr, 100)
	require.NoError(t, err)
	require.Equal(t, []github.File{
		{Path: "a.go", Status: "modified", Additions: 2, Patch: patch},
		{Path: "b.go", Status: "added", Additions: 10},
		{Path: "c.go", Status: "removed", Deletions: 4, Patch: "@@ -1,4 +0,0 @@\n-x\n-y\n-z\n-w\n"},
	}, files)
	files, err = c.Files(ctx, inst, repo, pr, 1)
	require.NoError(t, err)
	require.Len(t, files, 1)

	diff, cut, err := c.FileDiff(ctx, inst, repo, pr, "a.go", 1000)
	require.NoError(t, err)
	require.False(t, cut)
	require.Equal(t, patch, diff)
	diff, cut, err = c.FileDiff(ctx, inst, repo, pr, "a.go", 40)
	require.NoError(t, err)
	require.True(t, cut)
	require.Equal(t, "@@ -1,2 +1,3 @@\n package widget\n", diff, "cut at a line")
	diff, cut, err = c.FileDiff(ctx, inst, repo, pr, "zzz.go", 40)
	require.NoError(t, err)
	require.False(t, cut)
	require.Empty(t, diff)
}

// TestSearchIssues: results only from the repositories given, whatever
// scope the query asks for.
func TestSearchIssues(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	s.Install(acme, otherFull) // another installation reaches gadgets
	s.AddIssue(repoFull, alice, "Widget spins backwards", "", false)
	s.AddIssue(repoFull, alice, "Widget too loud", "", true)
	s.AddIssue(otherFull, alice, "Gadget spins backwards", "", false)
	s.AddIssue("evil/public", alice, "spins backwards everywhere", "", false)

	got, err := c.SearchIssues(ctx, inst, "spins backwards", []github.Repo{repo}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "Widget spins backwards", got[0].Title)
	require.Equal(t, repo.FullName(), got[0].Repo.FullName())

	got, err = c.SearchIssues(ctx, inst, "spins repo:evil/public org:evil", []github.Repo{repo}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1, "the query cannot widen its scope")

	got, err = c.SearchIssues(ctx, inst, "widget is:pr", []github.Repo{repo}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.True(t, got[0].PullRequest)

	_, err = c.SearchIssues(ctx, inst, "spins", nil, 10)
	require.Error(t, err, "no repositories, no search")
}

func TestRepositories(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	s.SetPageSize(2)
	inst := s.Install(acme, "acme/a", "acme/b", "acme/c")
	got, err := newClient(t, s).Repositories(context.Background(), inst)
	require.NoError(t, err)
	require.Equal(t, "acme/a,acme/b,acme/c", repoNames(got))
}

// TestReviewThread: one review thread's comments, not its neighbours',
// newest within the budget, oldest first.
func TestReviewThread(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	s.SetPageSize(2)
	pr := s.AddIssue(repoFull, alice, "Add widgets", "", true)
	root := s.AddReviewComment(repoFull, pr, alice, "a.go", "@weft-test why?", 0)
	s.AddReviewComment(repoFull, pr, alice, "b.go", "unrelated", 0)
	s.AddReviewComment(repoFull, pr, githubtest.Bot, "", "because", root.ID)
	s.AddReviewComment(repoFull, pr, alice, "", "thanks", root.ID)

	got, older, err := c.ReviewThread(ctx, inst, repo, pr, root.ID, 1000)
	require.NoError(t, err)
	require.False(t, older)
	var bodies []string
	for _, cm := range got {
		bodies = append(bodies, cm.Body)
		require.True(t, cm.Review)
		require.Equal(t, "a.go", cm.Path)
	}
	require.Equal(t, []string{"@weft-test why?", "because", "thanks"}, bodies)

	got, older, err = c.ReviewThread(ctx, inst, repo, pr, root.ID, 13)
	require.NoError(t, err)
	require.True(t, older)
	require.Len(t, got, 2)
	require.Equal(t, "because", got[0].Body)
}
