package app

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// routeGetIssue is the REST call reading an issue, the first of a
// prompt's reads.
const routeGetIssue = "GET /repos/{owner}/{repo}/issues/{issue_number}"

// TestGitHubAcrossPlatforms, through weft serve against githubtest and
// slacktest: a GitHub conversation asked to continue in Slack calls
// continue_in_slack, and the Slack thread gets it with its history and a
// link back to the issue; a turn from Slack shows the issue without
// reading GitHub again, while a new GitHub comment is read and seen; the
// GitHub tools are offered. `/weft continue <issue URL>` brings another
// issue's conversation into Slack, refused until the GitHub account and
// the workspace are linked, and the Slack answers are echoed on the issue
// (WEFT_ECHO_GITHUB=answers).
func TestGitHubAcrossPlatforms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := githubtest.NewServer(t)
	acme := githubtest.User{ID: 77, Login: "acme", Type: "Organization"}
	inst := gh.Install(acme, githubRepo)
	bob := githubtest.User{ID: 501, Login: "bob", Type: "User"}
	w := newSlackWorldEnv(t, false, map[string]string{
		"GITHUB_APP_ID": strconv.Itoa(githubtest.AppID), "GITHUB_PRIVATE_KEY": string(gh.PrivateKeyPEM()),
		"GITHUB_WEBHOOK_SECRET": githubtest.WebhookSecret, "GITHUB_APP_SLUG": githubtest.AppSlug, "GITHUB_API_URL": gh.URL(),
		"SLACK_CONTINUE_CHANNEL_ID": "C0GENERAL", "WEFT_ECHO_GITHUB": "answers",
	})
	gh.DeliverTo(w.base + "/webhooks/github")
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return llmtest.Reply{Text: "Done: " + last.Content}
		case strings.Contains(last.Content, "continue in slack"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "continue_in_slack", Arguments: "{}"}}}
		case strings.Contains(last.Content, "continue on github "):
			f := strings.Fields(last.Content)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "continue_in_github", Arguments: `{"url":"` + f[len(f)-1] + `"}`}}}
		}
		return llmtest.Reply{Text: "Answer to: " + last.Content}
	})
	gw := &githubWorld{base: w.base, store: w.store, llm: w.llm, gh: gh, inst: inst, bob: bob}
	getIssues := func() int {
		n := 0
		for _, c := range gh.Calls() {
			if c.Route == routeGetIssue {
				n++
			}
		}
		return n
	}
	// slackSays waits for weft's message in a Slack thread holding text.
	slackSays := func(ts, text string) string {
		var got string
		require.Eventually(t, func() bool {
			for _, m := range w.slack.BotMessages(w.channel) {
				if m.ThreadTS == ts && m.TS != ts && strings.Contains(m.Text, text) {
					got = m.Text
					return true
				}
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "weft never said %q in Slack", text)
		return got
	}
	// githubSays waits for weft's comment on issue n holding text.
	githubSays := func(n int, text string) string {
		var got string
		require.Eventually(t, func() bool {
			for _, c := range gh.BotComments(githubRepo, n) {
				if strings.Contains(c.Body, text) {
					got = c.Body
					return true
				}
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "weft never said %q on GitHub", text)
		return got
	}

	// A GitHub conversation, with the GitHub tools offered.
	n := gh.AddIssue(githubRepo, bob, "Flaky test", "It fails on Tuesdays", false)
	issueURL := "https://github.com/" + githubRepo + "/issues/" + strconv.Itoa(n)
	gw.comment(t, n, "@weft-test why does it fail?")
	gw.answers(t, n, 1)
	th := gw.thread(t, n)
	tenant, _, err := w.store.ThreadTenant(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.GitHubTenant(acme.ID), tenant, "the tenant is the installation's account")
	first := w.llm.Requests()[0]
	require.Contains(t, first.Tools, "get_github_issue")
	require.Contains(t, first.Tools, "search_github_issues")
	require.Contains(t, first.Tools, "continue_in_slack")
	waitSettled(t, w.store, th.ID)
	// Unlinked, the workspace is another organisation: its /weft continue
	// finds nothing, and nothing is written.
	status, reply := w.command(t, slacktest.TeamID, "continue "+issueURL)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, reply, "I found no", reply)
	require.Zero(t, w.count(t, "SELECT count(*) FROM slack_thread_metadata"))
	require.NoError(t, w.store.LinkTenants(ctx, "acme", tenant, thread.SlackTenant(slacktest.TeamID)))

	// Asked to continue in Slack: the Slack thread gets the conversation,
	// the issue the link, and the turn read the issue once for its two
	// model calls.
	reads := getIssues()
	gw.comment(t, n, "@weft-test please continue in slack")
	githubSays(n, "Done: Opened a Slack thread and posted a summary of the conversation there: https://")
	require.Equal(t, reads+1, getIssues(), "one read of the issue for the turn's two model calls")
	var parent slacktest.Message
	for _, m := range w.slack.BotMessages(w.channel) {
		if m.ThreadTS == "" || m.ThreadTS == m.TS {
			parent = m
		}
	}
	require.NotEmpty(t, parent.TS)
	require.Contains(t, parent.Text, "Continued from <"+issueURL+"|"+githubRepo+"#"+strconv.Itoa(n)+">")
	summary := slackSays(parent.TS, "why does it fail?") // the history comes along
	require.Contains(t, summary, "From "+githubRepo+"#"+strconv.Itoa(n)+": "+issueURL)
	require.Equal(t, th.ID, w.thread(t, parent.TS).ID, "the same weft thread")
	waitSettled(t, w.store, th.ID)

	// A turn from Slack shows the issue without reading GitHub; its answer
	// is echoed on the issue.
	reads = getIssues()
	w.slack.Post(w.ada, w.channel, parent.TS, "what about Wednesdays?")
	slackSays(parent.TS, "Answer to: ada: what about Wednesdays?")
	reqs := w.llm.Requests()
	require.Contains(t, reqs[len(reqs)-1].System, "It fails on Tuesdays", "the issue is in the prompt")
	require.Equal(t, reads, getIssues(), "from the cache")
	echo := githubSays(n, "In Slack, weft answered:")
	require.Contains(t, echo, "what about Wednesdays?")
	waitSettled(t, w.store, th.ID)

	// A comment on GitHub is read again, and the Slack part of the
	// conversation is in its history.
	gh.AddComment(githubRepo, n, bob, "it only fails in CI")
	gw.comment(t, n, "@weft-test and now?")
	githubSays(n, "and now?")
	require.Greater(t, getIssues(), reads)
	reqs = w.llm.Requests()
	last := reqs[len(reqs)-1]
	require.Contains(t, last.System, "it only fails in CI", "the new comment is seen")
	require.True(t, slices.ContainsFunc(last.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Content, "what about Wednesdays?") }))
	waitSettled(t, w.store, th.ID)

	// /weft continue <issue URL> brings another issue's conversation here,
	// within the organisation only.
	other := gh.AddIssue(githubRepo, bob, "Slow build", "It takes an hour", false)
	otherURL := "https://github.com/" + githubRepo + "/issues/" + strconv.Itoa(other)
	gw.comment(t, other, "@weft-test can we cache it?")
	gw.answers(t, other, 1)
	oth := gw.thread(t, other)
	waitSettled(t, w.store, oth.ID)
	_, reply = w.command(t, slacktest.TeamID, "continue https://github.com/"+githubRepo+"/issues/999")
	require.Contains(t, reply, "I found no", "an issue without a conversation: %s", reply)
	slackThreads := w.count(t, "SELECT count(*) FROM slack_thread_metadata")

	status, reply = w.command(t, slacktest.TeamID, "continue <"+otherURL+">")
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.HasPrefix(reply, "Continuing the conversation here: https://"), reply)
	require.Equal(t, slackThreads+1, w.count(t, "SELECT count(*) FROM slack_thread_metadata"))
	p := reply[strings.LastIndex(reply, "/p")+2:]
	require.Len(t, p, 16, reply)
	ts := p[:10] + "." + p[10:]
	require.Equal(t, oth.ID, w.thread(t, ts).ID)
	slackSays(ts, "can we cache it?")
	_, reply = w.command(t, slacktest.TeamID, "continue "+githubRepo+"#"+strconv.Itoa(other))
	require.True(t, strings.HasPrefix(reply, "That conversation already continues in Slack"), reply)

	// The next answer, asked in Slack, comments on the issue too.
	w.slack.Post(w.ada, w.channel, ts, "which cache?")
	slackSays(ts, "Answer to: ada: which cache?")
	echo = githubSays(other, "Answer to: ada: which cache?")
	require.Contains(t, echo, "In Slack, weft answered:")
	require.Len(t, githubapi.Markers(echo), 1, "an echo carries its outbox marker")
	waitSettled(t, w.store, oth.ID)
	require.Len(t, gh.BotComments(githubRepo, other), 2, "the answer on GitHub and the echo, once each")

	// And back: a Slack conversation continues on an existing issue,
	// where a mention goes on with its history.
	third := gh.AddIssue(githubRepo, bob, "Docs are stale", "", false)
	thirdURL := "https://github.com/" + githubRepo + "/issues/" + strconv.Itoa(third)
	m := w.mention("the docs say v1, is that right?")
	slackSays(m.TS, "Answer to:")
	sth := w.thread(t, m.TS)
	waitSettled(t, w.store, sth.ID)
	w.slack.Post(w.ada, w.channel, m.TS, "please continue on github "+thirdURL)
	slackSays(m.TS, "Done: Posted a summary of the conversation on "+thirdURL)
	summary = githubSays(third, "the docs say v1, is that right?")
	require.Contains(t, summary, "Mention @"+githubtest.AppSlug+" in a comment here to continue")
	require.Len(t, githubapi.Markers(summary), 1)
	att, err := w.store.GitHubAttachment(ctx, sth.ID)
	require.NoError(t, err)
	require.Equal(t, third, att.Number)
	require.Equal(t, acme.ID, att.AccountID)
	waitSettled(t, w.store, sth.ID)
	gw.comment(t, third, "@weft-test which version then?")
	githubSays(third, "which version then?")
	require.Equal(t, sth.ID, gw.thread(t, third).ID, "the Slack conversation's thread")
	reqs = w.llm.Requests()
	last = reqs[len(reqs)-1]
	require.True(t, slices.ContainsFunc(last.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Content, "the docs say v1") }),
		"the Slack part of the conversation is in the history")
	require.Contains(t, last.System, `<github_issue repository="acme/api" number="`+strconv.Itoa(third)+`"`)
}
