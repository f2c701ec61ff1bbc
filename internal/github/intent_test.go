package github_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

// TestIntents: what each delivery asks of weft, from payloads the fake
// builds the way GitHub does.
func TestIntents(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	issue := s.AddIssue(repoFull, alice, "Broken", "please @weft-test fix", false)
	pr := s.AddIssue(repoFull, alice, "Add widgets", "", true)
	mention := s.AddComment(repoFull, issue, alice, "@weft-test why?")
	plain := s.AddComment(repoFull, issue, alice, "me too")
	own := s.AddComment(repoFull, issue, githubtest.Bot, "@weft-test said so\n\n<!-- weft:o1 -->")
	own.ViaApp = githubtest.AppID
	review := s.AddReviewComment(repoFull, pr, alice, "a.go", "@weft-test is this safe?", 0)
	reply := s.AddReviewComment(repoFull, pr, alice, "", "and this?", review.ID)
	bot := githubtest.Bot
	bob := githubtest.User{ID: 7002, Login: "bob", Type: "User"}

	for _, tc := range []struct {
		name    string
		event   string
		payload map[string]any
		intent  github.Intent
		check   func(t *testing.T, ev github.Event)
	}{
		{"mention on an issue", github.EventIssueComment, s.CommentPayload(inst, "created", repoFull, issue, mention), github.IntentMention,
			func(t *testing.T, ev github.Event) {
				require.Equal(t, mention.ID, ev.Comment.ID)
				require.Equal(t, issue, ev.Issue.Number)
				require.False(t, ev.Issue.PullRequest)
			}},
		{"comment without mention", github.EventIssueComment, s.CommentPayload(inst, "created", repoFull, issue, plain), github.IntentComment, nil},
		{"edited", github.EventIssueComment, s.CommentPayload(inst, "edited", repoFull, issue, mention), github.IntentEdited, nil},
		{"deleted", github.EventIssueComment, s.CommentPayload(inst, "deleted", repoFull, issue, mention), github.IntentDeleted, nil},
		{"the app's own comment", github.EventIssueComment, s.CommentPayload(inst, "created", repoFull, issue, own), github.IntentIgnore,
			func(t *testing.T, ev github.Event) { require.True(t, ev.FromApp) }},
		{"the app's own edit", github.EventIssueComment, s.CommentPayload(inst, "edited", repoFull, issue, own), github.IntentIgnore, nil},
		{"mention on a PR conversation", github.EventIssueComment, s.CommentPayload(inst, "created", repoFull, pr, mention), github.IntentMention,
			func(t *testing.T, ev github.Event) { require.True(t, ev.Issue.PullRequest) }},
		{"review comment mention", github.EventReviewComment, s.ReviewCommentPayload(inst, "created", repoFull, pr, review), github.IntentMention,
			func(t *testing.T, ev github.Event) {
				require.True(t, ev.Comment.Review)
				require.Equal(t, review.ID, ev.Comment.ThreadRoot())
				require.Equal(t, "a.go", ev.Comment.Path)
			}},
		{"review reply", github.EventReviewComment, s.ReviewCommentPayload(inst, "created", repoFull, pr, reply), github.IntentComment,
			func(t *testing.T, ev github.Event) { require.Equal(t, review.ID, ev.Comment.ThreadRoot()) }},
		{"assigned to the app", github.EventIssues, s.IssuesPayload(inst, "assigned", repoFull, issue, alice, &bot), github.IntentDelegated,
			func(t *testing.T, ev github.Event) { require.Equal(t, githubtest.BotLogin, ev.Assignee.Login) }},
		{"assigned to a person", github.EventIssues, s.IssuesPayload(inst, "assigned", repoFull, issue, alice, &bob), github.IntentIgnore, nil},
		{"opened with a mention", github.EventIssues, s.IssuesPayload(inst, "opened", repoFull, issue, alice, nil), github.IntentDelegated, nil},
		{"opened by the app", github.EventIssues, s.IssuesPayload(inst, "opened", repoFull, issue, bot, nil), github.IntentIgnore, nil},
		{"labeled", github.EventIssues, s.IssuesPayload(inst, "labeled", repoFull, issue, alice, nil), github.IntentIgnore, nil},
		{"installed", github.EventInstallation, s.InstallationPayload(inst, "created", alice), github.IntentInstalled,
			func(t *testing.T, ev github.Event) {
				require.Equal(t, acme.ID, ev.Account.ID)
				require.Equal(t, "acme/widgets", repoNames(ev.Added))
			}},
		{"uninstalled", github.EventInstallation, s.InstallationPayload(inst, "deleted", alice), github.IntentUninstalled, nil},
		{"unknown event", "star", map[string]any{"action": "created"}, github.IntentIgnore, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := s.Sign(tc.event, mustJSON(t, tc.payload))
			ev, err := c.Parse(tc.event, d.ID, d.Body)
			require.NoError(t, err)
			require.Equal(t, tc.intent, ev.Intent, ev.Intent.String())
			require.Equal(t, d.ID, ev.Delivery)
			if tc.event != "star" {
				require.Equal(t, inst, ev.Installation)
			}
			if tc.check != nil {
				tc.check(t, ev)
			}
		})
	}
}
