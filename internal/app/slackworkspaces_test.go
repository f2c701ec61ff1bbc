package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

const workspacesRedirect = "https://weft.example/oauth/slack/callback"

// installSlack runs the OAuth v2 install through weft's doors, as an
// admin of team does: /oauth/slack/install, Slack's consent, the callback.
func installSlack(t *testing.T, w *slackWorld, oauth *slacktest.OAuth, team, code string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(w.base + "/oauth/slack/install")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	oauth.AddTeamCode(code, workspacesRedirect, team)
	req, err := http.NewRequest(http.MethodGet, w.base+"/oauth/slack/callback?"+url.Values{"code": {code}, "state": {loc.Query().Get("state")}}.Encode(), nil)
	require.NoError(t, err)
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	resp, err = noFollow.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "install of %s", team)
}

// botAnswers waits until weft posted n messages in a channel's thread.
func botAnswers(t *testing.T, fake *slacktest.Server, channel, threadTS string, n int) []slacktest.Message {
	t.Helper()
	var got []slacktest.Message
	require.Eventually(t, func() bool {
		got = nil
		for _, m := range fake.BotMessages(channel) {
			if m.ThreadTS == threadTS && m.Metadata != nil && !m.Streaming { // finished
				got = append(got, m)
			}
		}
		return len(got) >= n
	}, 30*time.Second, 10*time.Millisecond, "weft never posted %d messages in %s", n, channel)
	return got
}

// postTokens are the tokens weft posted into channel with (a post, or the
// start of a streamed answer).
func postTokens(fake *slacktest.Server, channel string) []string {
	var out []string
	for _, c := range fake.Calls("") {
		if (c.Method == "chat.postMessage" || c.Method == "chat.startStream") && c.Form.Get("channel") == channel {
			out = append(out, c.Token)
		}
	}
	return out
}

// TestSlackInstalledWorkspaces: with OAuth installs and no SLACK_BOT_TOKEN,
// each workspace is answered and read with its own bot token (the fake
// refuses another workspace's token on its channels), a token rotated on
// refresh is used from then on, weft never answers its own bot user in
// either workspace, and a workspace that never installed weft gets nothing
// written for its events.
func TestSlackInstalledWorkspaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	alpha := slacktest.Team{ID: "T0ALPHA", Name: "alpha", BotUserID: "U0ALPHABOT", BotID: "B0ALPHABOT"}
	beta := slacktest.Team{ID: "T0BETA", Name: "beta", BotUserID: "U0BETABOT", BotID: "B0BETABOT"}
	gamma := slacktest.Team{ID: "T0GAMMA", Name: "gamma", BotUserID: "U0GAMMABOT", BotID: "B0GAMMABOT"}
	const apiToken = "workspaces-api-token"
	var oauth *slacktest.OAuth
	w := newSlackWorldSetup(t, false, func(fake *slacktest.Server) map[string]string {
		oauth = slacktest.NewOAuth(t, true)
		oauth.Attach(fake)
		for _, tm := range []slacktest.Team{alpha, beta, gamma} {
			fake.AddTeam(tm)
			fake.AddTeamChannel(tm.ID, "C"+tm.ID[1:], "channel")
		}
		return map[string]string{
			"SLACK_BOT_TOKEN": "", "SLACK_CLIENT_ID": slacktest.ClientID, "SLACK_CLIENT_SECRET": slacktest.ClientSecret,
			"SLACK_REDIRECT_URI": workspacesRedirect, "WEFT_ENCRYPTION_KEY": strings.Repeat("ab", 32), "WEFT_API_TOKEN": apiToken,
		}
	})
	installSlack(t, w, oauth, alpha.ID, "code-alpha")
	// beta's first token is about to expire: its first use refreshes it.
	oauth.SetExpiresIn(time.Minute)
	installSlack(t, w, oauth, beta.ID, "code-beta")
	oauth.SetExpiresIn(12 * time.Hour)

	ada := slacktest.User{ID: "U0ADA", Name: "ada"}
	qa := w.slack.Post(ada, "C0ALPHA", "", "<@"+alpha.BotUserID+"> alpha question")
	qb := w.slack.Post(ada, "C0BETA", "", "<@"+beta.BotUserID+"> beta question")
	require.Equal(t, "Answer to: alpha question", botAnswers(t, w.slack, "C0ALPHA", qa.TS, 1)[0].Text)
	require.Equal(t, "Answer to: beta question", botAnswers(t, w.slack, "C0BETA", qb.TS, 1)[0].Text)

	// The fake issued alpha's token 1 and beta's 2 at install, then beta's
	// 3 on its refresh; each token works only in its own workspace.
	require.Equal(t, 1, oauth.Refreshes(), "beta's token was refreshed once")
	require.Equal(t, []string{"xoxe.xoxb-slacktest-1"}, postTokens(w.slack, "C0ALPHA"))
	require.Equal(t, []string{"xoxe.xoxb-slacktest-3"}, postTokens(w.slack, "C0BETA"), "beta is posted to with its rotated token")

	for _, tc := range []struct {
		team    slacktest.Team
		channel string
		ts      string
	}{{alpha, "C0ALPHA", qa.TS}, {beta, "C0BETA", qb.TS}} {
		th, err := w.store.ThreadBySlackThread(ctx, tc.team.ID, tc.channel, tc.ts)
		require.NoError(t, err)
		w.settled(t, th.ID)
		// weft's own answer came back as a message event: its bot user of
		// that workspace is itself, so it is neither stored nor answered.
		in := w.inputs(t, th.ID)
		require.Len(t, in, 1, "%s: only the mention is stored", tc.team.ID)
		require.Len(t, w.slack.BotMessages(tc.channel), 1, "%s: one answer", tc.team.ID)
	}

	// get-thread-replies reads each workspace with its token: the channel's
	// workspace is the one weft has a thread in there.
	req, err := http.NewRequest(http.MethodGet, w.base+"/api/v1/slack/channels/C0BETA/threads/"+qb.TS+"/replies", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var page struct {
		Replies []struct{ Text string } `json:"replies"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, page.Replies, 1)
	require.Equal(t, "Answer to: beta question", page.Replies[0].Text)

	// gamma never installed weft: its events are acknowledged, nothing is
	// written and nothing posted.
	before := len(w.slack.Deliveries())
	qg := w.slack.Post(ada, "C0GAMMA", "", "<@"+gamma.BotUserID+"> anyone?")
	var ids []string
	require.Eventually(t, func() bool {
		ids = nil
		for _, d := range w.slack.Deliveries()[before:] {
			if d.Acked && d.Status == http.StatusOK {
				ids = append(ids, d.EventID)
			}
		}
		return len(ids) == 2 // app_mention and message
	}, 30*time.Second, 10*time.Millisecond)
	_, err = w.store.ThreadBySlackThread(ctx, gamma.ID, "C0GAMMA", qg.TS)
	require.ErrorIs(t, err, thread.ErrNotFound)
	require.Zero(t, w.count(t, "SELECT count(*) FROM webhook_deliveries WHERE delivery_id = ANY($1)", ids))
	require.Zero(t, w.count(t, "SELECT count(*) FROM slack_thread_metadata WHERE team_id = $1", gamma.ID))
	require.Empty(t, w.slack.BotMessages("C0GAMMA"))

	// alpha uninstalls weft: its installation is revoked, so a later
	// mention there is acknowledged and dropped like gamma's, rather than
	// answered with (or failing on) the dead token.
	gone := w.slack.Uninstall(alpha.ID)
	// Weft revokes, then records the event in a transaction of its own:
	// the test waits for both.
	require.Eventually(t, func() bool {
		return w.count(t, "SELECT count(*) FROM slack_installations WHERE team_id = $1 AND NOT is_active", alpha.ID) == 1 &&
			w.count(t, "SELECT count(*) FROM webhook_deliveries WHERE delivery_id = $1", gone) == 1
	}, 30*time.Second, 10*time.Millisecond, "app_uninstalled revokes the installation and is recorded")
	// The mention's two events (app_mention and message), told apart from
	// any retry of an earlier event by their new ids.
	seen := map[string]bool{}
	for _, d := range w.slack.Deliveries() {
		seen[d.EventID] = true
	}
	qa2 := w.slack.Post(ada, "C0ALPHA", "", "<@"+alpha.BotUserID+"> still there?")
	acked := func() bool {
		ids := map[string]bool{}
		for _, d := range w.slack.Deliveries() {
			if !seen[d.EventID] && d.Acked && d.Status == http.StatusOK && (d.Type == "app_mention" || d.Type == "message") {
				ids[d.EventID] = true
			}
		}
		return len(ids) == 2
	}
	if !assert.Eventually(t, acked, 30*time.Second, 10*time.Millisecond) {
		t.Fatalf("the mention's events were not both acknowledged; deliveries: %+v", w.slack.Deliveries())
	}
	_, err = w.store.ThreadBySlackThread(ctx, alpha.ID, "C0ALPHA", qa2.TS)
	require.ErrorIs(t, err, thread.ErrNotFound)
	require.Len(t, w.slack.BotMessages("C0ALPHA"), 1, "only the answer from before the uninstall")
}
