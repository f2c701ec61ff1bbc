package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// continuedInDiscord starts a Linear session, answers it, continues it in
// a Discord thread with /continue and waits until all of that is posted:
// it returns the session, the weft thread and the Discord thread.
func continuedInDiscord(t *testing.T, w *discordWorld) (lineartest.SessionOpts, uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	opts := w.mention(t, "Please investigate the login redirect loop")
	w.activities(t, opts.SessionID, 2)
	th := w.thread(t, opts.SessionID)
	w.settled(t, th.ID)
	require.NoError(t, w.store.LinkTenants(ctx, "acme", thread.LinearTenant(opts.OrganizationID), thread.DiscordTenant(w.guild)))
	status, _ := w.interact(t, discordtest.ContinueInteraction(w.discord.ApplicationID(), "tok-continue", w.guild, w.channel, w.ada, opts.IssueIdentifier))
	require.Equal(t, http.StatusOK, status)
	var edit string
	require.Eventually(t, func() bool {
		msgs := w.discord.InteractionMessages("tok-continue")
		if len(msgs) == 0 {
			return false
		}
		edit = msgs[0].Content
		return true
	}, 30*time.Second, 10*time.Millisecond)
	discordThread := edit[strings.LastIndex(edit, "/")+1:]
	w.sent(t, discordThread, 1)
	w.activities(t, opts.SessionID, 3)
	w.settled(t, th.ID)
	return opts, th.ID, discordThread
}

// summaryJobs counts the thread's echo summary jobs in each River state.
func (w *discordWorld) summaryJobs(t *testing.T, id uuid.UUID) map[string]int {
	t.Helper()
	rows, err := w.store.Pool().Query(context.Background(),
		`SELECT state, count(*) FROM river_job WHERE kind = 'weft_echo_summary' AND args->>'thread_id' = $1 GROUP BY state`, id.String())
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		require.NoError(t, rows.Scan(&state, &n))
		out[state] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// runSummaries makes the thread's echo summary jobs due now, as if the idle
// delay had passed, and waits until all n have run.
func (w *discordWorld) runSummaries(t *testing.T, id uuid.UUID, n int) {
	t.Helper()
	_, err := w.store.Pool().Exec(context.Background(),
		`UPDATE river_job SET state = 'available', scheduled_at = now(), finalized_at = NULL
		 WHERE kind = 'weft_echo_summary' AND args->>'thread_id' = $1`, id.String())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return w.summaryJobs(t, id)["completed"] == n }, 30*time.Second, 10*time.Millisecond,
		"the summary jobs never all ran")
}

// TestEchoLinearSessionContinuedInDiscord: a Linear session continued in
// Discord hears of the conversation there as WEFT_ECHO_LINEAR says.
func TestEchoLinearSessionContinuedInDiscord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		// want checks the activities Linear got after the Discord answer.
		want func(t *testing.T, acts []lineartest.Activity)
	}{
		{policy: "none", want: func(t *testing.T, acts []lineartest.Activity) { require.Empty(t, acts) }},
		{policy: "answers", want: func(t *testing.T, acts []lineartest.Activity) {
			require.Len(t, acts, 1)
			require.Equal(t, "response", acts[0].Type)
			require.Equal(t, "In Discord, weft answered:\n\nAnswer to: ada: what did you find so far?", acts[0].Body)
		}},
		{policy: "everything", want: func(t *testing.T, acts []lineartest.Activity) {
			require.Len(t, acts, 1)
			require.Equal(t, "response", acts[0].Type)
			require.Equal(t, "ada asked in Discord:\n> what did you find so far?\n\nweft answered in Discord:\n\nAnswer to: ada: what did you find so far?", acts[0].Body)
		}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			w := newDiscordWorldEnv(t, map[string]string{"WEFT_ECHO_LINEAR": tc.policy})
			opts, id, discordThread := continuedInDiscord(t, w)
			before := len(w.linear.Activities(opts.SessionID))

			w.discord.PostUserMessage(discordThread, w.ada, "what did you find so far?")
			require.Equal(t, "Answer to: ada: what did you find so far?", w.sent(t, discordThread, 2)[1].Content, "the answer goes where it was asked")
			w.settled(t, id) // echoes are written with the answer: settled, they are sent
			tc.want(t, w.linear.Activities(opts.SessionID)[before:])
			require.Empty(t, w.summaryJobs(t, id), "only a summary policy schedules summaries")
			th, err := w.store.Thread(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, thread.StatusWaiting, th.Status, "an echo changes nothing of the thread")
		})
	}
}

// TestEchoSummaryWhenIdle: with WEFT_ECHO_LINEAR=summary the session hears
// nothing per answer, and one summary once the conversation in Discord has
// gone idle: not one for an answer that a newer question followed within
// the idle delay, and not a second one when the job runs again.
func TestEchoSummaryWhenIdle(t *testing.T) {
	t.Parallel()
	w := newDiscordWorldEnv(t, map[string]string{"WEFT_ECHO_LINEAR": "summary", "WEFT_ECHO_IDLE": "1h"})
	opts, id, discordThread := continuedInDiscord(t, w)
	before := len(w.linear.Activities(opts.SessionID))

	w.discord.PostUserMessage(discordThread, w.ada, "what did you find so far?")
	w.sent(t, discordThread, 2)
	w.settled(t, id)
	require.Equal(t, map[string]int{"scheduled": 1}, w.summaryJobs(t, id), "a summary waits for the idle delay")
	// A second question before the delay: the first answer's summary is
	// moot, the second's tells of both.
	w.discord.PostUserMessage(discordThread, w.ada, "and where is the fix?")
	w.sent(t, discordThread, 3)
	w.settled(t, id)
	require.Equal(t, map[string]int{"scheduled": 2}, w.summaryJobs(t, id))
	require.Len(t, w.linear.Activities(opts.SessionID), before, "nothing in Linear before the conversation goes idle")

	w.runSummaries(t, id, 2)
	w.settled(t, id)
	acts := w.linear.Activities(opts.SessionID)[before:]
	require.Len(t, acts, 1, "one summary")
	require.Equal(t, "response", acts[0].Type, "a response: the session is not reopened")
	require.Equal(t, "The conversation went on in Discord: 2 questions. The last, from ada:\n> and where is the fix?\n\n"+
		"weft's last answer:\n\nAnswer to: ada: and where is the fix?", acts[0].Body)

	// The jobs run again (as after a crash between their write and River
	// marking them done): the summary is not posted twice.
	w.runSummaries(t, id, 2)
	w.settled(t, id)
	require.Len(t, w.linear.Activities(opts.SessionID)[before:], 1, "still one summary")
	rows, err := w.store.ThreadOutbox(context.Background(), id)
	require.NoError(t, err)
	n := 0
	for _, o := range rows {
		if o.Platform == thread.PlatformLinear && strings.Contains(string(o.Body), "The conversation went on") {
			n++
		}
	}
	require.Equal(t, 1, n, "one summary row in the outbox")
}

// TestEchoDefaults: by default a Discord thread continuing a Linear session
// hears the answers given in Linear, and the session's summary of the
// Discord exchange is dropped once the conversation moved back to Linear
// before it went idle.
func TestEchoDefaults(t *testing.T) {
	t.Parallel()
	w := newDiscordWorldEnv(t, nil)
	opts, id, discordThread := continuedInDiscord(t, w)
	before := len(w.linear.Activities(opts.SessionID))

	w.discord.PostUserMessage(discordThread, w.ada, "what did you find so far?")
	w.sent(t, discordThread, 2)
	w.settled(t, id)
	require.Len(t, w.linear.Activities(opts.SessionID), before, "Linear waits for the conversation to go idle")
	require.Equal(t, map[string]int{"scheduled": 1}, w.summaryJobs(t, id))

	w.deliver(t, w.signer.Prompted(opts, uuid.NewString(), "Which file exactly?"))
	acts := w.activities(t, opts.SessionID, before+1)
	require.Equal(t, "response", acts[len(acts)-1].Type)
	require.Contains(t, acts[len(acts)-1].Body, "Which file exactly?", "answered where it was asked")
	echo := w.sent(t, discordThread, 3)[2].Content
	require.True(t, strings.HasPrefix(echo, "In Linear, weft answered:\n\n"), echo)
	require.Contains(t, echo, "Which file exactly?")
	w.settled(t, id)
	require.Equal(t, map[string]int{"scheduled": 1}, w.summaryJobs(t, id), "Linear asked last: no summary for it")

	w.runSummaries(t, id, 1)
	w.settled(t, id)
	require.Len(t, w.linear.Activities(opts.SessionID), before+1, "the summary of the Discord exchange is moot")
}

// TestEchoToSlack: a Slack thread attached to the same conversation (as
// continuing it in Slack does) hears of the exchange in Discord as
// WEFT_ECHO_SLACK says, through the Slack client and the outbox, once.
func TestEchoToSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := slacktest.NewServer(t)
	const channel = "C0ENG"
	fake.AddChannel(channel, "channel")
	w := newDiscordWorldEnv(t, map[string]string{
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "SLACK_API_URL": fake.APIURL(),
		"WEFT_ECHO_SLACK": "everything", "WEFT_ECHO_LINEAR": "none",
	})
	_, id, discordThread := continuedInDiscord(t, w)
	parent := fake.Post(slacktest.User{ID: "U0ADA", Name: "ada"}, channel, "", "weft, keep us posted here")
	require.NoError(t, w.store.AttachSlack(ctx, thread.SlackAttachment{ThreadID: id, TeamID: slacktest.TeamID, ChannelID: channel,
		ThreadTS: parent.TS, ChannelType: "channel", CreatedBy: "U0ADA"}))

	w.discord.PostUserMessage(discordThread, w.ada, "what did you find so far?")
	w.sent(t, discordThread, 2)
	w.settled(t, id)
	var echoes []slacktest.Message
	for _, m := range fake.BotMessages(channel) {
		if m.ThreadTS == parent.TS {
			echoes = append(echoes, m)
		}
	}
	require.Len(t, echoes, 1)
	require.Equal(t, "ada asked in Discord:\n&gt; what did you find so far?\n\nweft answered in Discord:\n\nAnswer to: ada: what did you find so far?", echoes[0].Text)
}
