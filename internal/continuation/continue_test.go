package continuation_test

import (
	"context"
	"strings"
	"testing"

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
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// continueGuild is the Discord server conversations continue in.
const continueGuild = "100000000000000001"

type continueBundle struct {
	store   *db.Store
	fake    *discordtest.Server
	channel string
	cont    *continuation.Continuer
	linear  *thread.LinearAttachment
	thread  uuid.UUID
}

// setupContinue makes a Linear session's thread, and a Continuer with the
// real Discord client on the fake and the real ingester.
func setupContinue(t *testing.T, channelSetting, linked bool) *continueBundle {
	t.Helper()
	ctx := context.Background()
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
	b := &continueBundle{store: store, fake: fake, channel: fake.AddChannel(continueGuild), linear: dbtest.LinearAttachment()}
	b.cont = &continuation.Continuer{Store: store, Opener: surfacediscord.Opener{Store: store, Discord: client}, Recorder: ing, Refs: refs(store)}
	if channelSetting {
		b.cont.ChannelID = b.channel
	}
	if linked {
		require.NoError(t, store.LinkTenants(ctx, "acme", thread.LinearTenant(b.linear.WorkspaceID), thread.DiscordTenant(continueGuild)))
	}
	th, err := ing.StartThread(ctx, ing.Builder().WithGoal(b.linear.IssueIdentifier+": Fix the flaky test").InteractiveLinear(b.linear).
		WithInitialPrompt(thread.Stitch{Content: "Why does TestLogin flake?", Source: thread.PlatformLinear, ExternalID: b.linear.SessionID,
			Author: &thread.Author{Name: "Ada"}}))
	require.NoError(t, err)
	b.thread = th.ID
	return b
}

func TestContinueInDiscordTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OpensAttachesSummarizesAndLinks", func(t *testing.T) {
		t.Parallel()
		b := setupContinue(t, true, true)
		out, err := b.cont.Tool().Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.NoError(t, err)
		require.Contains(t, out, "https://discord.com/channels/100000000000000001/")

		att, err := b.store.DiscordAttachment(ctx, b.thread)
		require.NoError(t, err)
		require.Equal(t, b.channel, att.ChannelID)
		require.Equal(t, "weft", att.CreatedBy)
		require.Contains(t, out, att.DiscordThreadID)
		ch, ok := b.fake.Channel(att.DiscordThreadID)
		require.True(t, ok)
		require.EqualValues(t, 11, ch.Type, "a public thread")
		require.Equal(t, b.linear.IssueIdentifier+": Fix the flaky test", ch.Name)

		rows, err := b.store.ThreadOutbox(ctx, b.thread)
		require.NoError(t, err)
		var kinds []string
		for _, o := range rows {
			kinds = append(kinds, string(o.Platform)+"/"+string(o.Kind))
		}
		require.Equal(t, []string{"discord/message", "linear/response", "linear/session_update"}, kinds)

		again, err := b.cont.Tool().Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.NoError(t, err)
		require.Contains(t, again, "already continues")
	})

	t.Run("WithoutAChannelFails", func(t *testing.T) {
		t.Parallel()
		b := setupContinue(t, false, true)
		_, err := b.cont.Tool().Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.ErrorIs(t, err, continuation.ErrNoChannel)
	})

	t.Run("CommandResolvesIssueURLsAndKeys", func(t *testing.T) {
		t.Parallel()
		b := setupContinue(t, false, true)
		_, err := b.cont.ContinueRef(ctx, "ENG-0", b.channel, thread.DiscordTenant(continueGuild), "u1")
		require.ErrorIs(t, err, thread.ErrNotFound)
		got, err := b.cont.ContinueRef(ctx, "https://linear.app/acme/issue/"+strings.ToLower(b.linear.IssueIdentifier)+"/fix-the-flaky-test", b.channel, thread.DiscordTenant(continueGuild), "u1")
		require.NoError(t, err)
		require.Equal(t, b.thread, got.ThreadID)
		require.False(t, got.Existing)
	})
}

// TestContinueStopsAtTheOrganisation: unlinked, a Discord server cannot
// /continue a Linear workspace's session, and that session's agent cannot
// continue it into the server; nothing is opened or attached either way.
func TestContinueStopsAtTheOrganisation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nothingHappened := func(t *testing.T, b *continueBundle) {
		t.Helper()
		_, err := b.store.DiscordAttachment(ctx, b.thread)
		require.ErrorIs(t, err, thread.ErrNotFound)
		for _, r := range b.fake.Requests() {
			require.NotContains(t, r.Path, "/threads", "no Discord thread may be opened")
		}
	}

	t.Run("ServerCannotContinueAnotherOrganisationsSession", func(t *testing.T) {
		t.Parallel()
		b := setupContinue(t, false, false)
		for _, ref := range []string{b.linear.IssueIdentifier, b.linear.SessionID, b.linear.IssueID} {
			_, err := b.cont.ContinueRef(ctx, ref, b.channel, thread.DiscordTenant(continueGuild), "u1")
			require.ErrorIs(t, err, thread.ErrNotFound, ref)
		}
		nothingHappened(t, b)
	})

	t.Run("SessionCannotContinueIntoAnotherOrganisationsServer", func(t *testing.T) {
		t.Parallel()
		b := setupContinue(t, true, false)
		_, err := b.cont.Tool().Handler(ctx, tools.Call{ThreadID: b.thread, AgentName: "weft"})
		require.ErrorIs(t, err, continuation.ErrOtherOrganisation)
		nothingHappened(t, b)
	})

	t.Run("OtherServerOfTheOrganisationCannotPullItAcross", func(t *testing.T) {
		// The session and the continue channel's server are linked; the
		// asking server is not: it finds nothing.
		t.Parallel()
		b := setupContinue(t, true, true)
		_, err := b.cont.ContinueRef(ctx, b.linear.IssueIdentifier, b.channel, thread.DiscordTenant("100000000000000077"), "u1")
		require.ErrorIs(t, err, thread.ErrNotFound)
		nothingHappened(t, b)
	})
}

func TestSummary(t *testing.T) {
	t.Parallel()
	chain := []thread.Stitch{
		{Type: thread.StitchSystemPrompt, Content: "You are weft."},
		{Type: thread.StitchInitialPrompt, Content: "Why   does\nit flake?", Author: &thread.Author{Name: "Ada"}},
		{Type: thread.StitchLLMCall, Content: ""},
		{Type: thread.StitchToolCall, Content: "tool output"},
		{Type: thread.StitchLLMCall, Content: "A race in the fixture."},
		{Type: thread.StitchDiscordMessage, Content: "deleted", DeletedAt: thread.Stitch{}.CreatedAt.AddDate(2020, 0, 0)},
		{Type: thread.StitchLinearActivity, Content: strings.Repeat("x", 400)},
	}
	got := continuation.Summary("ENG-1: Fix it", chain)
	require.Equal(t, "Continuing **ENG-1: Fix it** here.\n\n**So far:**\n"+
		"> **Ada:** Why does it flake?\n"+
		"> **weft:** A race in the fixture.\n"+
		"> **Someone:** "+strings.Repeat("x", 279)+"…\n"+
		"\nReply in this thread to continue; I have the whole conversation.", got)
}

// refs are every platform's, as weft asks them.
func refs(store *db.Store) []continuation.Resolver {
	return []continuation.Resolver{surfacelinear.Refs{Store: store}, surfacediscord.Refs{Store: store}, surfaceslack.Refs{Store: store}}
}

// TestElsewhere: help text names the platforms on the list, but the one
// the conversation continues on.
func TestElsewhere(t *testing.T) {
	t.Parallel()
	discordCont := &continuation.Continuer{Opener: surfacediscord.Opener{}, Refs: refs(nil)}
	require.Equal(t, "Linear or Slack", discordCont.Elsewhere())
	require.Equal(t, "a Linear issue key (ENG-123) or URL, or a Slack thread's link", discordCont.Hints())
	slackCont := &continuation.Continuer{Opener: surfaceslack.Opener{}, Refs: refs(nil)[:1]}
	require.Equal(t, "Linear", slackCont.Elsewhere())
	require.Empty(t, (&continuation.Continuer{Opener: surfaceslack.Opener{}}).Elsewhere())
}
