package github_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

func TestReadContext(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	issue := s.AddIssue(repoFull, alice, "Broken <widget>", "It broke.", false)
	s.Update(repoFull, issue, func(is *githubtest.Issue) { is.Labels = []string{"bug"} })
	s.AddComment(repoFull, issue, alice, "old news")
	s.AddComment(repoFull, issue, githubtest.Bot, "Looking.\n\n<!-- weft:o1 -->")
	s.AddComment(repoFull, issue, alice, "@weft-test any luck?")

	x, err := c.ReadContext(ctx, inst, repo, issue, github.Budgets{Comments: 50, Files: 10, Diff: 100}, "")
	require.NoError(t, err)
	require.True(t, x.Older)
	require.Len(t, x.Comments, 2)
	p := x.Prompt()
	require.Contains(t, p, `<github_issue repository="acme/widgets" number="1" state="open"`)
	require.Contains(t, p, "<title>Broken <widget></title>")
	require.Contains(t, p, "<labels>bug</labels>")
	require.Contains(t, p, "<body>It broke.</body>")
	require.Contains(t, p, `<comments older_omitted="true">`)
	require.Contains(t, p, `<comment author="weft-test[bot]"`)
	require.Contains(t, p, ">Looking.</comment>", "markers left out")
	require.NotContains(t, p, "old news")
	require.NotContains(t, p, "changed_files")

	pr := s.AddIssue(repoFull, alice, "Add widgets", "", true)
	s.Update(repoFull, pr, func(is *githubtest.Issue) {
		is.Files = []githubtest.File{
			{Path: "a.go", Status: "modified", Additions: 1, Deletions: 1, Patch: "@@ -1 +1 @@\n-a\n+b\n"},
			{Path: "b.go", Status: "added", Additions: 3, Patch: "@@ -0,0 +1,3 @@\n+x\n+y\n+z\n"},
		}
	})
	x, err = c.ReadContext(ctx, inst, repo, pr, github.Budgets{Comments: 100, Files: 1, Diff: 100}, "b.go")
	require.NoError(t, err)
	p = x.Prompt()
	require.Contains(t, p, "<github_pull_request ")
	require.Contains(t, p, `<file path="a.go" status="modified" additions="1" deletions="1"/>`)
	require.NotContains(t, p, `<file path="b.go"`, "one file within the budget")
	require.Contains(t, p, "<diff path=\"b.go\">\n@@ -0,0 +1,3 @@\n+x\n+y\n+z\n</diff>", "the review comment's file, even beyond the listed ones")
	require.Contains(t, p, "</github_pull_request>")
}
