package github_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/surface"
)

func TestMarkers(t *testing.T) {
	t.Parallel()
	require.Equal(t, "<!-- weft:0190a1b2-c3d4 -->", github.Marker("0190a1b2-c3d4", 0))
	require.Equal(t, "<!-- weft:0190a1b2-c3d4#2 -->", github.Marker("0190a1b2-c3d4", 1))
	for body, want := range map[string][]string{
		"answer\n\n<!-- weft:abc -->":                   {"<!-- weft:abc -->"},
		"answer\n\n<!-- weft:abc#3 -->":                 {"<!-- weft:abc#3 -->"},
		"quoting <!-- weft:abc --> and <!-- weft:d -->": {"<!-- weft:abc -->", "<!-- weft:d -->"},
		"<!-- weft: abc -->":                            nil,
		"<!--weft:abc-->":                               nil,
		"<!-- other:abc -->":                            nil,
		"no marker":                                     nil,
	} {
		require.Equal(t, want, github.Markers(body), body)
	}
	// Each part of a long post has its own marker, and no part's marker
	// is a prefix-match of another's.
	bodies := github.Post{OutboxID: "row-1", Text: strings.Repeat("word ", 30000)}.Bodies()
	require.Len(t, bodies, 3)
	seen := map[string]bool{}
	for i, b := range bodies {
		m := github.Markers(b)
		require.Equal(t, []string{github.Marker("row-1", i)}, m)
		require.False(t, seen[m[0]])
		seen[m[0]] = true
		require.LessOrEqual(t, len(utf16.Encode([]rune(b))), github.BodyLimit)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	emoji := strings.Repeat("😀", 40000) // 80,000 UTF-16 units, 40,000 runes
	for _, tc := range []struct {
		name  string
		text  string
		limit int
		parts int
	}{
		{"short", "hello", 100, 1},
		{"empty", "", 100, 0},
		{"paragraphs", strings.Repeat("para graph\n\n", 30), 100, 4},
		{"one long word", strings.Repeat("x", 250), 100, 3},
		{"emoji count double", emoji, 0, 2},
		{"code block", "```\n" + strings.Repeat("line\n", 60) + "```", 100, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parts := github.Split(tc.text, tc.limit)
			require.Len(t, parts, tc.parts)
			limit := tc.limit
			if limit == 0 {
				limit = github.BodyLimit
			}
			for _, p := range parts {
				require.LessOrEqual(t, len(utf16.Encode([]rune(p))), limit)
				require.Equal(t, 0, strings.Count(p, "```")%2, "each part closes its code blocks: %q", p)
				require.NotContains(t, p, "\uFFFD", "no rune is cut in two")
			}
			require.Equal(t, strings.Join(strings.Fields(tc.text), ""),
				strings.ReplaceAll(strings.Join(strings.Fields(strings.Join(parts, " ")), ""), "``````", ""))
		})
	}
}

// TestPostComment: an answer posts once, with its marker; a retry after a
// lost answer finds the marker and posts nothing; a long answer posts
// each part once even when the retry comes half-way.
func TestPostComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("fresh", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "Broken", "", false)
		ids, err := c.PostComment(ctx, inst, github.Post{Repo: repo, Number: n, OutboxID: "o1", Text: "Fixed it.", Fresh: true})
		require.NoError(t, err)
		got := s.BotComments(repoFull, n)
		require.Len(t, got, 1)
		require.Equal(t, []int64{got[0].ID}, ids)
		require.Equal(t, "Fixed it.\n\n<!-- weft:o1 -->", got[0].Body)
		require.Equal(t, int64(githubtest.AppID), got[0].ViaApp)
		require.Empty(t, routeCalls(s, routeListComments), "a fresh post does not look")
	})
	t.Run("retry after lost answer", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "Broken", "", false)
		for i := range 150 { // two pages and more of other comments
			s.AddComment(repoFull, n, alice, "comment "+string(rune('a'+i%26)))
		}
		s.Fail(routeCreateComment, 1, fakekit.LostResponse())
		post := github.Post{Repo: repo, Number: n, OutboxID: "o2", Text: "Answer.", Fresh: true}
		_, err := c.PostComment(ctx, inst, post)
		require.Error(t, err)
		require.True(t, surface.Ambiguous(err))
		require.Len(t, s.BotComments(repoFull, n), 1, "the post was applied")
		// People keep talking before the retry.
		s.AddComment(repoFull, n, alice, "hello?")
		post.Fresh = false
		ids, err := c.PostComment(ctx, inst, post)
		require.NoError(t, err)
		got := s.BotComments(repoFull, n)
		require.Len(t, got, 1, "exactly one comment")
		require.Equal(t, []int64{got[0].ID}, ids)
	})
	t.Run("retry of a long answer half posted", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "Broken", "", false)
		post := github.Post{Repo: repo, Number: n, OutboxID: "o3", Text: strings.Repeat("long answer ", 12000), Fresh: true}
		require.Len(t, post.Bodies(), 3)
		// A 500 on the first part: nothing posted.
		s.Fail(routeCreateComment, 1, fakekit.Fail(500))
		_, err := c.PostComment(ctx, inst, post)
		require.Error(t, err)
		require.Empty(t, s.BotComments(repoFull, n))

		// Part one lands, part two is lost on the way back.
		s.Fail(routeCreateComment, 1, fakekit.Fault{Delay: 1}) // a late success
		s.Fail(routeCreateComment, 1, fakekit.LostResponse())
		_, err = c.PostComment(ctx, inst, post)
		require.Error(t, err)
		require.Len(t, s.BotComments(repoFull, n), 2)

		post.Fresh = false
		ids, err := c.PostComment(ctx, inst, post)
		require.NoError(t, err)
		got := s.BotComments(repoFull, n)
		require.Len(t, got, 3, "each part exactly once")
		for i, cm := range got {
			require.Equal(t, ids[i], cm.ID)
			require.Equal(t, []string{github.Marker("o3", i)}, github.Markers(cm.Body))
		}
	})
	t.Run("review reply retried", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "Add widgets", "", true)
		root := s.AddReviewComment(repoFull, n, alice, "widget.go", "@weft-test why this?", 0)
		reply := s.AddReviewComment(repoFull, n, alice, "", "also this", root.ID)
		post := github.Post{Repo: repo, Number: n, ReplyTo: reply.ID, OutboxID: "o4", Text: "Because.", Fresh: true}
		_, err := c.PostComment(ctx, inst, post)
		require.True(t, surface.IsKind(err, surface.KindNotFound), "no reply to a reply: %v", err)
		post.ReplyTo = (&github.Comment{ID: reply.ID, InReplyTo: reply.InReplyTo}).ThreadRoot()
		s.Fail(routeCreateReply, 1, fakekit.LostResponse())
		_, err = c.PostComment(ctx, inst, post)
		require.Error(t, err)
		post.Fresh = false
		ids, err := c.PostComment(ctx, inst, post)
		require.NoError(t, err)
		got := s.BotComments(repoFull, n)
		require.Len(t, got, 1)
		require.Equal(t, []int64{got[0].ID}, ids)
		require.Equal(t, root.ID, got[0].InReplyTo, "filed in the thread, under its first comment")
		require.Equal(t, "widget.go", got[0].Path)
	})
}

func TestReactions(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	ctx := context.Background()
	n := s.AddIssue(repoFull, alice, "Add widgets", "@weft-test do it", true)
	cm := s.AddComment(repoFull, n, alice, "@weft-test look")
	rc := s.AddReviewComment(repoFull, n, alice, "a.go", "@weft-test here", 0)
	for range 2 { // a second reaction is GitHub's 200, not a second 👀
		require.NoError(t, c.ReactToComment(ctx, inst, repo, &github.Comment{ID: cm.ID}, github.ReactionEyes))
		require.NoError(t, c.ReactToComment(ctx, inst, repo, &github.Comment{ID: rc.ID, Review: true}, github.ReactionEyes))
		require.NoError(t, c.ReactToIssue(ctx, inst, repo, n, github.ReactionEyes))
	}
	is := s.Issue(repoFull, n)
	require.Len(t, is.Reactions, 1)
	require.Len(t, is.Comments[0].Reactions, 1)
	require.Len(t, is.Review[0].Reactions, 1)
	require.Equal(t, "eyes", is.Comments[0].Reactions[0].Content)
	err := c.ReactToComment(ctx, inst, repo, &github.Comment{ID: 999999}, github.ReactionEyes)
	require.Error(t, err)
}
