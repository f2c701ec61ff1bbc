package github_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	"github.com/weft-dev/weft/internal/thread"
)

// TestSenderPostsOnce: an answer is a comment carrying its row's marker,
// and the same row sent again (a retry after a crash) posts nothing more;
// a review answer replies in its thread; an ack is 👀 on the mention.
func TestSenderPostsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t)
	c, err := githubapi.New(githubapi.Deps{AppID: githubtest.AppID, PrivateKey: r.gh.PrivateKeyPEM(), Slug: githubtest.AppSlug, APIURL: r.gh.URL()})
	require.NoError(t, err)
	s := surfacegithub.Sender{Client: c}
	n := r.gh.AddIssue("acme/api", r.bob, "t", "", true)
	mention := r.gh.AddComment("acme/api", n, r.bob, "@weft-test hi")
	root := r.gh.AddReviewComment("acme/api", n, r.bob, "a.go", "@weft-test here?", 0)
	target := thread.GitHubTarget{InstallationID: r.inst, Owner: "acme", Repo: "api", Number: n}

	answer := thread.Outbox{ID: thread.NewID(), Platform: thread.PlatformGitHub, Target: target.String(), Kind: thread.OutboxResponse,
		Body: thread.OutboxBody{Text: "Because."}.JSON(), Attempts: 1}
	id, err := s.Send(ctx, answer)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	for _, c := range r.gh.Calls() {
		require.NotEqual(t, "GET", c.Method, "a first attempt posts without looking for its marker: %s", c.URL)
	}
	answer.Attempts = 2 // a retry, after a crash between the post and its record
	again, err := s.Send(ctx, answer)
	require.NoError(t, err)
	require.Equal(t, id, again)
	bots := r.gh.BotComments("acme/api", n)
	require.Len(t, bots, 1)
	require.Contains(t, bots[0].Body, "Because.")
	require.Contains(t, bots[0].Body, githubapi.Marker(answer.ID.String(), 0))

	review := target
	review.ReviewRoot = root.ID
	_, err = s.Send(ctx, thread.Outbox{ID: thread.NewID(), Platform: thread.PlatformGitHub, Target: review.String(), Kind: thread.OutboxResponse,
		Body: thread.OutboxBody{Text: "Yes."}.JSON()})
	require.NoError(t, err)
	is := r.gh.Issue("acme/api", n)
	require.Len(t, is.Review, 2)
	require.Equal(t, root.ID, is.Review[1].InReplyTo)

	_, err = s.Send(ctx, thread.Outbox{ID: thread.NewID(), Platform: thread.PlatformGitHub, Target: target.String(), Kind: thread.OutboxThought,
		Body: thread.OutboxBody{Action: surfacegithub.AckAction, Parameter: thread.GitHubCommentID(false, mention.ID)}.JSON()})
	require.NoError(t, err)
	is = r.gh.Issue("acme/api", n)
	require.Len(t, is.Comments[0].Reactions, 1)
	require.Equal(t, githubapi.ReactionEyes, is.Comments[0].Reactions[0].Content)

	_, err = s.Send(ctx, thread.Outbox{ID: thread.NewID(), Platform: thread.PlatformGitHub, Target: "nope", Kind: thread.OutboxResponse,
		Body: thread.OutboxBody{Text: "x"}.JSON()})
	require.ErrorIs(t, err, thread.ErrInvalid)
}
