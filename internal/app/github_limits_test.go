package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

// inFlight is how long after the fake answered a rate limit a request of
// weft's may still have been sent before weft read that answer.
const inFlight = 250 * time.Millisecond

// limited reports whether a call got one of GitHub's rate limits.
func limited(c githubtest.Call) bool {
	return c.Status == http.StatusForbidden || c.Status == http.StatusTooManyRequests
}

// TestGitHubRateLimits: an installation under GitHub's primary rate limit
// (X-RateLimit-Remaining: 0 until X-RateLimit-Reset), then under a
// secondary one (403 and 429 with Retry-After), is sent nothing more once
// weft heard of the limit until it ends, and its mention is still
// answered, once, after it; another installation's mention meanwhile is
// answered and never limited. A post GitHub applied but answered 502 is
// not posted twice.
func TestGitHubRateLimits(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	const otherRepo = "globex/web"
	other := w.gh.Install(githubtest.User{ID: 78, Login: "globex", Type: "Organization"}, otherRepo)

	mention := func(t *testing.T, inst int64, repo string, n int, body string) {
		t.Helper()
		c := w.gh.AddComment(repo, n, w.bob, body)
		d := w.gh.Deliver(githubapi.EventIssueComment, w.gh.CommentPayload(inst, "created", repo, n, c))
		require.NoError(t, d.Err)
		require.Equal(t, http.StatusOK, d.Status)
	}
	answered := func(t *testing.T, repo string, n int) githubtest.Comment {
		t.Helper()
		var got []githubtest.Comment
		require.Eventually(t, func() bool {
			got = w.gh.BotComments(repo, n)
			return len(got) > 0
		}, time.Minute, 20*time.Millisecond, "%s#%d never answered", repo, n)
		return got[0]
	}
	eyes := func(t *testing.T, repo string, n int) {
		t.Helper()
		require.Eventually(t, func() bool {
			cs := w.gh.Issue(repo, n).Comments
			return len(cs) > 0 && len(cs[0].Reactions) == 1 && cs[0].Reactions[0].Content == githubapi.ReactionEyes
		}, time.Minute, 20*time.Millisecond, "no 👀 on %s#%d", repo, n)
	}

	for _, limit := range []struct {
		name   string
		impose func() time.Time
	}{
		{"primary", func() time.Time { return w.gh.ExhaustRateLimit(w.inst, 3*time.Second) }},
		{"secondary 403", func() time.Time { return w.gh.SecondaryLimit(w.inst, 3*time.Second, http.StatusForbidden) }},
		{"secondary 429", func() time.Time { return w.gh.SecondaryLimit(w.inst, 3*time.Second, http.StatusTooManyRequests) }},
	} {
		t.Run(limit.name, func(t *testing.T) {
			n := w.gh.AddIssue(githubRepo, w.bob, "Limited "+limit.name, "", false)
			m := w.gh.AddIssue(otherRepo, w.bob, "Not limited "+limit.name, "", false)
			since := len(w.gh.Calls())
			reset := limit.impose()
			mention(t, w.inst, githubRepo, n, "@weft-test are you there?")
			mention(t, other, otherRepo, m, "@weft-test and here?")

			eyes(t, otherRepo, m)
			answered(t, otherRepo, m)
			a := answered(t, githubRepo, n)
			th := w.thread(t, n)
			// The 👀, limited too, is only an acknowledgement: it goes
			// after the limit, or is dropped once the answer is ready.
			require.Eventually(t, func() bool {
				rows, err := w.store.ThreadOutbox(context.Background(), th.ID)
				require.NoError(t, err)
				for _, o := range rows {
					if !o.Status.Final() {
						return false
					}
				}
				return true
			}, 30*time.Second, 20*time.Millisecond, "the thread's posts never settled")
			require.Len(t, w.gh.BotComments(githubRepo, n), 1, "answered once")
			require.Len(t, w.gh.BotComments(otherRepo, m), 1)
			require.False(t, a.CreatedAt.Before(reset), "answered after the limit ended")

			// Once weft heard of the limit, it sent that installation
			// nothing until the limit ended; the other installation was
			// never limited. A request weft made while the limit's first
			// answer was on its way to it (the 👀 and the turn's reads of
			// the issue go at once) is not one it made knowing: inFlight
			// allows for that.
			calls := w.gh.Calls()[since:]
			var heard time.Time
			var limits int
			for _, c := range calls {
				if c.Installation == w.inst && limited(c) {
					limits++
					if heard.IsZero() || c.Answered.Before(heard) {
						heard = c.Answered
					}
				}
				require.False(t, c.Installation == other && limited(c), "the other installation is not limited: %s %s", c.Method, c.URL)
			}
			require.NotZero(t, limits, "the limit was met")
			for _, c := range calls {
				if c.Installation == w.inst && c.At.After(heard.Add(inFlight)) && c.At.Before(reset) {
					t.Errorf("%s %s sent at %s, after the limit was heard of (%s) and before it ended (%s)",
						c.Method, c.URL, c.At.Format(time.StampMilli), heard.Format(time.StampMilli), reset.Format(time.StampMilli))
				}
			}
			t.Logf("%s: %d limited answers; answered %s after the limit ended", limit.name, limits, a.CreatedAt.Sub(reset))
		})
	}

	t.Run("5xx", func(t *testing.T) {
		n := w.gh.AddIssue(githubRepo, w.bob, "Flaky GitHub", "", false)
		// The first attempt fails 503 without posting; the second posts,
		// but GitHub answers 502.
		w.gh.Fail("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 1, fakekit.Fail(http.StatusServiceUnavailable))
		w.gh.Fail("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 1, fakekit.Fault{Status: http.StatusBadGateway, Apply: true})
		mention(t, w.inst, githubRepo, n, "@weft-test still up?")
		answered(t, githubRepo, n)
		waitSettled(t, w.store, w.thread(t, n).ID)
		require.Len(t, w.gh.BotComments(githubRepo, n), 1, "the marker found the post GitHub applied")
		var posts []int
		for _, c := range w.gh.Calls() {
			if c.Route == "POST /repos/{owner}/{repo}/issues/{issue_number}/comments" && c.Status >= 500 {
				posts = append(posts, c.Status)
			}
		}
		require.Equal(t, []int{http.StatusServiceUnavailable, http.StatusBadGateway}, posts, "both faults were met")
	})
}
