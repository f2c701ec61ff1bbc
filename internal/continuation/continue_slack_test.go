package continuation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/continuation"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// continueChannel is the Slack channel conversations continue in.
const continueChannel = "C0CONTINUE"

type slackContinueBundle struct {
	store  *db.Store
	ing    *ingest.Ingester
	fake   *slacktest.Server
	cont   *continuation.Continuer
	linear *thread.LinearAttachment
	thread uuid.UUID
}

// setupSlackContinue makes a Linear session's thread, and a Continuer into
// Slack with the real Slack client on the fake and the real ingester;
// linked puts the Linear and Slack workspaces in one organisation.
func setupSlackContinue(t *testing.T, linked bool) *slackContinueBundle {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	logger := dbtest.Logger(t)
	store := db.New(pool, logger)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	ing := ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger})
	fake := slacktest.NewServer(t)
	fake.AddChannel(continueChannel, "channel")
	ws, err := slack.NewWorkspaces(slack.Config{Token: slacktest.BotToken, APIURL: fake.APIURL(), Logger: logger}, nil)
	require.NoError(t, err)
	b := &slackContinueBundle{store: store, ing: ing, fake: fake, linear: dbtest.LinearAttachment()}
	b.cont = &continuation.Continuer{Store: store, Opener: surfaceslack.Opener{Store: store, Slack: slackThreads{ws}}, Recorder: ing, Refs: refs(store),
		Origins: []continuation.Originator{surfacelinear.Origin{Store: store, IssueURL: func(_ context.Context, att *thread.LinearAttachment) (string, error) {
			return "https://linear.app/acme/issue/" + att.IssueIdentifier, nil
		}}}}
	if linked {
		require.NoError(t, store.LinkTenants(ctx, "acme", thread.LinearTenant(b.linear.WorkspaceID), thread.SlackTenant(slacktest.TeamID)))
	}
	th, err := ing.StartThread(ctx, ing.Builder().WithGoal(b.linear.IssueIdentifier+": Fix the flaky test").InteractiveLinear(b.linear).
		WithInitialPrompt(thread.Stitch{Content: "Why does TestLogin flake?", Source: thread.PlatformLinear, ExternalID: b.linear.SessionID,
			Author: &thread.Author{Name: "Ada"}}))
	require.NoError(t, err)
	b.thread = th.ID
	return b
}

// outboxOf lists a thread's outbox rows as platform/kind/target and their
// text or link.
func outboxOf(t *testing.T, store *db.Store, id uuid.UUID) (rows, texts []string) {
	t.Helper()
	got, err := store.ThreadOutbox(context.Background(), id)
	require.NoError(t, err)
	for _, o := range got {
		body, err := o.Content()
		require.NoError(t, err)
		rows = append(rows, string(o.Platform)+"/"+string(o.Kind)+"/"+o.Target)
		texts = append(texts, body.Text+body.ExternalURL)
	}
	return rows, texts
}

func TestContinueInSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CommandOpensAttachesSummarizesAndLinks", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, true)
		got, err := b.cont.ContinueRef(ctx, b.linear.IssueIdentifier, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
		require.NoError(t, err)
		require.Equal(t, b.thread, got.ThreadID)
		require.False(t, got.Existing)

		// The parent names the goal and links back to the issue.
		parents := b.fake.BotMessages(continueChannel)
		require.Len(t, parents, 1)
		parent := parents[0]
		require.Empty(t, parent.ThreadTS)
		require.Equal(t, "*"+b.linear.IssueIdentifier+": Fix the flaky test*\nContinued from <https://linear.app/acme/issue/"+
			b.linear.IssueIdentifier+"|"+b.linear.IssueIdentifier+">", parent.Text)
		require.Equal(t, "https://slacktest.slack.com/archives/"+continueChannel+"/p"+strings.Replace(parent.TS, ".", "", 1), got.URL)

		att, err := b.store.SlackAttachment(ctx, b.thread)
		require.NoError(t, err)
		require.Equal(t, thread.SlackAttachment{ThreadID: b.thread, TeamID: slacktest.TeamID, ChannelID: continueChannel,
			ThreadTS: parent.TS, ChannelType: "channel", CreatedBy: "U0ADA", Active: true}, *withoutTimes(att))
		th, err := b.store.ThreadBySlackThread(ctx, slacktest.TeamID, continueChannel, parent.TS)
		require.NoError(t, err)
		require.Equal(t, b.thread, th.ID, "follow-ups there reach the same thread")

		rows, texts := outboxOf(t, b.store, b.thread)
		require.Equal(t, []string{"slack/message/" + att.Target(), "linear/response/" + b.linear.SessionID,
			"linear/session_update/" + b.linear.SessionID}, rows)
		require.Contains(t, texts[0], "Continuing *"+b.linear.IssueIdentifier+": Fix the flaky test* here.")
		require.Contains(t, texts[0], "From "+b.linear.IssueIdentifier+": https://linear.app/acme/issue/"+b.linear.IssueIdentifier)
		require.Contains(t, texts[0], "> *Ada:* Why does TestLogin flake?")
		require.Equal(t, "Continuing this conversation in Slack: "+got.URL, texts[1])
		require.Equal(t, got.URL, texts[2])

		again, err := b.cont.ContinueRef(ctx, b.linear.IssueIdentifier, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
		require.NoError(t, err)
		require.True(t, again.Existing)
		require.Equal(t, got.URL, again.URL)
		require.Len(t, b.fake.BotMessages(continueChannel), 1, "nothing opened twice")
	})

	t.Run("ToolOpensInTheConfiguredChannel", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, true)
		b.cont.ChannelID = continueChannel
		tool := b.cont.Tool()
		require.Equal(t, "continue_in_slack", tool.Name)
		out, err := tool.Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.NoError(t, err)
		require.Contains(t, out, "https://slacktest.slack.com/archives/"+continueChannel+"/p")
		att, err := b.store.SlackAttachment(ctx, b.thread)
		require.NoError(t, err)
		require.Equal(t, "weft", att.CreatedBy)
	})

	t.Run("LinkBackWithoutTheIssueURL", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, true)
		b.cont.Origins = []continuation.Originator{surfacelinear.Origin{Store: b.store}}
		_, err := b.cont.ContinueRef(ctx, b.linear.IssueIdentifier, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
		require.NoError(t, err)
		require.Equal(t, "*"+b.linear.IssueIdentifier+": Fix the flaky test*\nContinued from "+b.linear.IssueIdentifier,
			b.fake.BotMessages(continueChannel)[0].Text)
	})
}

// TestContinueDiscordThreadInSlack: /weft continue takes a Discord
// thread's link, within the organisation only.
func TestContinueDiscordThreadInSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSlackContinue(t, false)
	att := dbtest.DiscordAttachment()
	th, err := b.ing.StartThread(ctx, b.ing.Builder().WithGoal("Why is the deploy slow?").InteractiveDiscord(att).
		WithInitialPrompt(thread.Stitch{Content: "Why is the deploy slow?", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(),
			Author: &thread.Author{Name: "ada"}}))
	require.NoError(t, err)
	link := "https://discord.com/channels/" + att.GuildID + "/" + att.DiscordThreadID

	_, err = b.cont.ContinueRef(ctx, link, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
	require.ErrorIs(t, err, thread.ErrNotFound, "another organisation's Discord thread is not found")
	require.Empty(t, b.fake.Calls("chat.postMessage"))

	require.NoError(t, b.store.LinkTenants(ctx, "acme", thread.DiscordTenant(att.GuildID), thread.SlackTenant(slacktest.TeamID)))
	got, err := b.cont.ContinueRef(ctx, link, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
	require.NoError(t, err)
	require.Equal(t, th.ID, got.ThreadID)
	slackAtt, err := b.store.SlackAttachment(ctx, th.ID)
	require.NoError(t, err)
	rows, _ := outboxOf(t, b.store, th.ID)
	require.Equal(t, []string{"slack/message/" + slackAtt.Target()}, rows, "no Linear session to tell")
}

// TestContinueInSlackStopsAtTheOrganisation: unlinked, a Slack workspace
// cannot continue a Linear workspace's session, nor its agent continue it
// into the workspace; nothing is posted or attached either way.
func TestContinueInSlackStopsAtTheOrganisation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nothingHappened := func(t *testing.T, b *slackContinueBundle) {
		t.Helper()
		_, err := b.store.SlackAttachment(ctx, b.thread)
		require.ErrorIs(t, err, thread.ErrNotFound)
		require.Empty(t, b.fake.Calls("chat.postMessage"), "nothing may be posted")
	}

	t.Run("WorkspaceCannotContinueAnotherOrganisationsSession", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, false)
		for _, ref := range []string{b.linear.IssueIdentifier, b.linear.SessionID, b.linear.IssueID} {
			_, err := b.cont.ContinueRef(ctx, ref, continueChannel, thread.SlackTenant(slacktest.TeamID), "U0ADA")
			require.ErrorIs(t, err, thread.ErrNotFound, ref)
		}
		nothingHappened(t, b)
	})

	t.Run("SessionCannotContinueIntoAnotherOrganisationsWorkspace", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, false)
		b.cont.ChannelID = continueChannel
		_, err := b.cont.Tool().Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.ErrorIs(t, err, continuation.ErrOtherOrganisation)
		nothingHappened(t, b)
	})

	t.Run("OtherWorkspaceOfTheOrganisationCannotPullItAcross", func(t *testing.T) {
		t.Parallel()
		b := setupSlackContinue(t, true)
		_, err := b.cont.ContinueRef(ctx, b.linear.IssueIdentifier, continueChannel, thread.SlackTenant("T0OTHER"), "U0ADA")
		require.ErrorIs(t, err, thread.ErrNotFound)
		nothingHappened(t, b)
	})
}

// TestContinueSlackThreadInDiscord: continue_in_discord moves a
// conversation that began in Slack to a Discord thread of its
// organisation, and only of its organisation.
func TestContinueSlackThreadInDiscord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T, linked bool) (*db.Store, *continuation.Continuer, uuid.UUID) {
		t.Helper()
		pool := dbtest.NewPool(t)
		logger := dbtest.Logger(t)
		store := db.New(pool, logger)
		rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
		require.NoError(t, err)
		ing := ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger})
		fake := discordtest.NewServer(t)
		client, err := discord.New(discord.Config{Token: discordtest.Token, APIBaseURL: fake.URL(), Logger: logger})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		cont := &continuation.Continuer{Store: store, Opener: surfacediscord.Opener{Store: store, Discord: client}, Recorder: ing, Refs: refs(store),
			ChannelID: fake.AddChannel(continueGuild)}
		if linked {
			require.NoError(t, store.LinkTenants(ctx, "acme", thread.SlackTenant(slacktest.TeamID), thread.DiscordTenant(continueGuild)))
		}
		att := &thread.SlackAttachment{TeamID: slacktest.TeamID, ChannelID: "C0ORIGIN", ThreadTS: "1700000000.000100", CreatedBy: "U0ADA"}
		th, err := ing.StartThread(ctx, ing.Builder().WithGoal("Why is the deploy slow?").InteractiveSlack(att).
			WithInitialPrompt(thread.Stitch{Content: "Why is the deploy slow?", Source: thread.PlatformSlack,
				ExternalID: thread.SlackMessageID(att.TeamID, att.ChannelID, att.ThreadTS), Author: &thread.Author{Name: "U0ADA"}}))
		require.NoError(t, err)
		return store, cont, th.ID
	}

	t.Run("Linked", func(t *testing.T) {
		t.Parallel()
		store, cont, id := setup(t, true)
		out, err := cont.Tool().Handler(ctx, tools.Call{ThreadID: id, AgentName: "weft"})
		require.NoError(t, err)
		require.Contains(t, out, "https://discord.com/channels/"+continueGuild+"/")
		att, err := store.DiscordAttachment(ctx, id)
		require.NoError(t, err)
		rows, texts := outboxOf(t, store, id)
		require.Equal(t, []string{"discord/message/" + att.DiscordThreadID}, rows, "no Linear session to tell")
		require.Contains(t, texts[0], "Why is the deploy slow?")
	})

	t.Run("CommandFindsTheSlackThreadByItsLink", func(t *testing.T) {
		t.Parallel()
		store, cont, id := setup(t, true)
		link := "https://acme.slack.com/archives/C0ORIGIN/p1700000000000100"
		_, err := cont.ContinueRef(ctx, "https://acme.slack.com/archives/C0ORIGIN/p1700000000000999", "", thread.DiscordTenant(continueGuild), "u1")
		require.ErrorIs(t, err, thread.ErrNotFound, "no such thread")
		_, err = cont.ContinueRef(ctx, link, "", thread.DiscordTenant("100000000000000077"), "u1")
		require.ErrorIs(t, err, thread.ErrNotFound, "a server of another organisation finds nothing")
		got, err := cont.ContinueRef(ctx, "<"+link+"?thread_ts=1700000000.000100&cid=C0ORIGIN|the thread>", "", thread.DiscordTenant(continueGuild), "u1")
		require.NoError(t, err)
		require.Equal(t, id, got.ThreadID)
		_, err = store.DiscordAttachment(ctx, id)
		require.NoError(t, err)
	})

	t.Run("OtherOrganisation", func(t *testing.T) {
		t.Parallel()
		store, cont, id := setup(t, false)
		_, err := cont.Tool().Handler(ctx, tools.Call{ThreadID: id, AgentName: "weft"})
		require.ErrorIs(t, err, continuation.ErrOtherOrganisation)
		_, err = store.DiscordAttachment(ctx, id)
		require.ErrorIs(t, err, thread.ErrNotFound)
	})
}

// withoutTimes is a Slack attachment without its timestamps, to compare.
func withoutTimes(a *thread.SlackAttachment) *thread.SlackAttachment {
	c := *a
	c.CreatedAt, c.UpdatedAt = time.Time{}, time.Time{}
	return &c
}

// slackThreads are the workspaces' clients as SlackOpener opens threads.
type slackThreads struct{ *slack.Workspaces }

func (w slackThreads) Threads(ctx context.Context, teamID string) (surfaceslack.ThreadStarter, error) {
	return w.Client(ctx, teamID)
}
