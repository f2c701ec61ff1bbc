package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// command sends `/weft <text>` from a workspace's user in the world's
// channel, signed and form-encoded as Slack sends it, and returns the
// status and the ephemeral reply.
func (w *slackWorld) command(t *testing.T, team, text string) (int, string) {
	t.Helper()
	body := []byte(url.Values{
		"command": {"/weft"}, "text": {text}, "team_id": {team}, "team_domain": {slacktest.TeamName},
		"channel_id": {w.channel}, "user_id": {w.ada.ID}, "user_name": {w.ada.Name},
		"response_url": {"https://hooks.slack.com/commands/T/1/x"}, "trigger_id": {"1.2.3"},
	}.Encode())
	req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/slack/commands", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = slacktest.Sign(body, time.Now())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var reply struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&reply))
		require.Equal(t, "ephemeral", reply.ResponseType)
	}
	return resp.StatusCode, reply.Text
}

// count runs a count query on the world's database.
func (w *slackWorld) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, w.store.Pool().QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// TestContinueLinearSessionInSlack: `/weft continue ENG-1` in a Slack
// channel, through weft serve against slacktest and lineartest, opens a
// Slack thread on the Linear session's weft thread, with its summary and a
// link back; a follow-up there is answered there with the Linear history in
// its prompt. Refused for another organisation's workspace, with nothing
// written.
func TestContinueLinearSessionInSlack(t *testing.T) {
	t.Parallel()
	const token, secret = "lin_api_e2e", "whsec-e2e"
	ctx := context.Background()
	lin := lineartest.NewServer(t)
	lin.AddToken(token, lineartest.OrganizationID)
	w := newSlackWorldEnv(t, false, map[string]string{
		"LINEAR_WEBHOOK_SECRET": secret, "LINEAR_ACCESS_TOKEN": token, "LINEAR_API_URL": lin.URL(),
	})
	lw := &linearWorld{base: w.base, store: w.store, llm: w.llm, linear: lin, signer: lineartest.Signer{Secret: []byte(secret)}}

	// A Linear session, answered in Linear.
	opts := lw.mention(t, "Please investigate the login redirect loop")
	issueURL := "https://linear.app/acme/issue/" + opts.IssueIdentifier + "/login-redirect-loop"
	lin.AddIssue(lineartest.Issue{ID: opts.IssueID, Identifier: opts.IssueIdentifier, Title: "Login redirect loop", URL: issueURL})
	lw.activities(t, opts.SessionID, 2)
	th := lw.thread(t, opts.SessionID)
	w.settled(t, th.ID)

	// Unlinked, the workspace is another organisation: it finds nothing
	// and nothing is written or posted.
	status, reply := w.command(t, slacktest.TeamID, "continue "+opts.IssueIdentifier)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, reply, "I found no Linear, Discord or GitHub conversation for")
	require.Zero(t, w.count(t, "SELECT count(*) FROM slack_thread_metadata"))
	require.Empty(t, w.slack.BotMessages(w.channel))

	require.NoError(t, w.store.LinkTenants(ctx, "acme", thread.LinearTenant(opts.OrganizationID), thread.SlackTenant(slacktest.TeamID)))

	// In a channel weft is not in, Slack refuses the thread's first post:
	// the caller is told why, and nothing is written.
	general := w.channel
	w.channel = "C0ELSEWHERE"
	status, reply = w.command(t, slacktest.TeamID, "continue "+opts.IssueIdentifier)
	w.channel = general
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, reply, "invite me")
	require.Zero(t, w.count(t, "SELECT count(*) FROM slack_thread_metadata"))

	status, reply = w.command(t, slacktest.TeamID, "continue "+opts.IssueIdentifier)
	require.Equal(t, http.StatusOK, status)
	prefix := "Continuing the conversation here: https://" + slacktest.TeamName + ".slack.com/archives/" + w.channel + "/p"
	require.True(t, strings.HasPrefix(reply, prefix), reply)
	link := reply[strings.Index(reply, "https://"):]

	// The parent names the issue and links back to it; the summary opens
	// the thread; Linear gets the link.
	parent := w.slack.BotMessages(w.channel)[0]
	require.Equal(t, prefix+strings.Replace(parent.TS, ".", "", 1), reply)
	require.Contains(t, parent.Text, "Continued from <"+issueURL+"|"+opts.IssueIdentifier+">")
	// The parent is in its thread (its thread_ts is its ts) once answered.
	summary := w.answers(t, parent.TS, 2)[1].Text
	require.Contains(t, summary, "login redirect loop")
	require.Contains(t, summary, "From "+opts.IssueIdentifier+": "+issueURL)
	got := w.thread(t, parent.TS)
	require.Equal(t, th.ID, got.ID, "the same weft thread")
	acts := lw.activities(t, opts.SessionID, 3)
	require.Equal(t, "response", acts[len(acts)-1].Type)
	require.Contains(t, acts[len(acts)-1].Body, link)
	require.Eventually(t, func() bool {
		for _, u := range lin.SessionUpdates() {
			for _, e := range u.ExternalURLs {
				if e.URL == link && e.Label == "Slack thread" {
					return true
				}
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "the session links the Slack thread")
	w.settled(t, th.ID)

	// Again: it continues there already.
	_, reply = w.command(t, slacktest.TeamID, "continue "+opts.IssueIdentifier)
	require.Equal(t, "That conversation already continues in Slack: "+link, reply)
	require.Len(t, w.slack.BotMessages(w.channel), 2, "the parent and the summary, nothing more")

	// A follow-up in the Slack thread is answered there, with the Linear
	// part of the history in its prompt, and nothing more goes to Linear.
	linearActs := len(lin.Activities(opts.SessionID))
	w.slack.Post(w.ada, w.channel, parent.TS, "what did you find so far?")
	answer := w.answers(t, parent.TS, 3)[2]
	require.Equal(t, "Answer to: ada: what did you find so far?", answer.Text)
	reqs := w.llm.Requests()
	require.Contains(t, reqs[len(reqs)-1].Messages[0].Content, "Please investigate the login redirect loop")
	w.settled(t, th.ID)
	require.Len(t, lin.Activities(opts.SessionID), linearActs, "nothing more in Linear")
	require.Equal(t, 1, w.count(t, "SELECT count(*) FROM cross_platform_threads WHERE has_slack AND has_linear AND thread_id = $1", th.ID))

	// Usage without a reference; the other subcommands' usage.
	_, reply = w.command(t, slacktest.TeamID, "continue")
	require.Contains(t, reply, "Usage: `/weft continue <conversation>`")
	require.Contains(t, reply, "a Linear issue key (ENG-123) or URL, a Discord thread's link, or a GitHub issue or pull request URL", "the hints of the platforms on the list")
}
