package tenancy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/replies"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
)

// guildsOf knows the server of Discord threads weft does not track.
func guildsOf(guilds map[string]string) surfacediscord.ChannelGuild {
	return func(_ context.Context, id string) (string, error) {
		g, ok := guilds[id]
		if !ok {
			return "", fmt.Errorf("channel %s: %w", id, thread.ErrNotFound)
		}
		return g, nil
	}
}

func TestReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	guildA, guildB := dbtest.Snowflake(), dbtest.Snowflake()
	discordIn := func(guild string) *thread.DiscordAttachment {
		att := dbtest.DiscordAttachment()
		att.GuildID = guild
		return att
	}
	linearIn := func(workspace string) *thread.LinearAttachment {
		att := dbtest.LinearAttachment()
		att.WorkspaceID = workspace
		return att
	}
	type conv struct {
		th      *thread.Thread
		discord string // its Discord thread id, if any
	}
	make := func(d *thread.DiscordAttachment, l *thread.LinearAttachment) conv {
		c := conv{th: dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: d, Linear: l})}
		if d != nil {
			c.discord = d.DiscordThreadID
		}
		return c
	}
	// guildA, guildC and workspace org-1 are one organisation; guildB and
	// org-2 are each their own (never linked).
	guildC := dbtest.Snowflake()
	require.NoError(t, store.LinkTenants(ctx, "acme", thread.DiscordTenant(guildA), thread.DiscordTenant(guildC), thread.LinearTenant("org-1")))
	var (
		inA      = make(discordIn(guildA), nil)
		inA2     = make(discordIn(guildA), nil)
		inB      = make(discordIn(guildB), nil)
		inW1     = make(nil, linearIn("org-1"))
		inW1b    = make(nil, linearIn("org-1"))
		inW2     = make(nil, linearIn("org-2"))
		both     = make(discordIn(guildA), linearIn("org-1")) // a Linear session continued in Discord
		operator = make(nil, nil)                             // the CLI's or the API's
	)
	untrackedA, untrackedB, untrackedC := dbtest.Snowflake(), dbtest.Snowflake(), dbtest.Snowflake()
	guild := guildsOf(map[string]string{untrackedA: guildA, untrackedB: guildB, untrackedC: guildC})

	tests := []struct {
		name   string
		guilds []string // DISCORD_ALLOWED_GUILDS
		from   conv
		target string
		ok     bool
	}{
		{name: "Itself", from: inA, target: inA.th.ID.String(), ok: true},
		{name: "ItselfByDiscordID", from: inA, target: inA.discord, ok: true},
		{name: "SameServer", from: inA, target: inA2.th.ID.String(), ok: true},
		{name: "SameServerByDiscordID", from: inA, target: inA2.discord, ok: true},
		{name: "OtherServer", from: inA, target: inB.th.ID.String()},
		{name: "OtherServerFromItsSide", from: inB, target: inA.th.ID.String()},
		{name: "OtherServerByDiscordID", from: inA, target: inB.discord},
		{name: "UntrackedSameServer", from: inA, target: untrackedA, ok: true},
		{name: "UntrackedLinkedServer", from: inA, target: untrackedC, ok: true},
		{name: "UntrackedOtherServer", from: inA, target: untrackedB},
		{name: "UntrackedOtherServerFromItsSide", from: inB, target: untrackedA},
		{name: "SameWorkspace", from: inW1, target: inW1b.th.ID.String(), ok: true},
		{name: "OtherWorkspace", from: inW1, target: inW2.th.ID.String()},
		{name: "OtherWorkspaceFromItsSide", from: inW2, target: inW1.th.ID.String()},
		{name: "ContinuedFromItsWorkspace", from: inW1, target: both.th.ID.String(), ok: true},
		{name: "ContinuedFromItsServer", from: inA2, target: both.discord, ok: true},
		{name: "ContinuedFromAnotherServer", from: inB, target: both.th.ID.String()},
		{name: "LinkedWorkspaceReadsServer", from: inW1, target: inA.discord, ok: true},
		{name: "LinkedServerReadsWorkspace", from: inA, target: inW1.th.ID.String(), ok: true},
		{name: "LinearDoesNotReadUnlinkedServer", from: inW2, target: inB.discord},
		{name: "ServerDoesNotReadUnlinkedWorkspace", from: inB, target: inW2.th.ID.String()},
		{name: "LinearDoesNotReadUntrackedUnlinkedServer", from: inW2, target: untrackedB},
		{name: "LinearReadsAllowedServer", guilds: []string{guildA}, from: inW1, target: untrackedA, ok: true},
		{name: "LinearOutsideAllowedServers", guilds: []string{guildA}, from: inW1, target: untrackedC},
		{name: "OperatorsThread", from: inA, target: operator.th.ID.String()},
		{name: "OperatorReadsAnything", from: operator, target: inW2.th.ID.String(), ok: true},
		{name: "UnknownIsTheReadersToAnswer", from: inA, target: thread.NewID().String(), ok: true},
		{name: "UnknownDiscordIsTheReadersToAnswer", from: inA, target: dbtest.Snowflake(), ok: true},
		{name: "NotAnIDIsTheReadersToRefuse", from: inA, target: "nonsense", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reach := &tenancy.Reach{Store: store, Locators: []tenancy.Locator{surfacediscord.Locator(store, guild, tt.guilds)}}
			err := reach.Check(ctx, tt.from.th.ID, tt.target)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tenancy.ErrOutOfReach)
			}
		})
	}
}

// TestReachSlack: each Slack workspace is read with its own token, so a
// conversation reads a Slack thread only in a workspace of its own
// organisation: the one named, else the one weft has threads in that
// channel in, else (for a Slack conversation) its own. The operator's is
// asked of no workspace: the reader reads in the one named, or its own.
func TestReachSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	reach := &tenancy.Reach{Store: store}
	slackIn := func(team, channel string) *dbtest.ThreadOpts {
		return &dbtest.ThreadOpts{Slack: &thread.SlackAttachment{TeamID: team, ChannelID: channel, ThreadTS: "1700000000.000100", CreatedBy: "U0123"}}
	}
	// acme is a Discord server, a Linear workspace and two Slack
	// workspaces; T0OTHER is a workspace of its own.
	acmeDiscord, lone := dbtest.DiscordAttachment(), dbtest.DiscordAttachment()
	acmeLinear := dbtest.LinearAttachment()
	acmeLinear.WorkspaceID = "org-acme"
	require.NoError(t, store.LinkTenants(ctx, "acme", thread.DiscordTenant(acmeDiscord.GuildID), thread.LinearTenant(acmeLinear.WorkspaceID),
		thread.SlackTenant("T0ACME1"), thread.SlackTenant("T0ACME2")))
	dbtest.Thread(ctx, t, store, slackIn("T0ACME2", "C0ACME2")) // weft knows C0ACME2 is in T0ACME2
	dbtest.Thread(ctx, t, store, slackIn("T0OTHER", "C0OTHER"))
	fromSlack := dbtest.Thread(ctx, t, store, slackIn("T0ACME1", "C0ACME1"))
	fromDiscord := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: acmeDiscord})
	fromLinear := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: acmeLinear})
	fromLone := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: lone})
	operator := dbtest.Thread(ctx, t, store, nil)
	for _, tt := range []struct {
		name          string
		from          uuid.UUID
		team, channel string
		want          string // the workspace to read in
		err           error
	}{
		{"Slack, its own workspace by default", fromSlack.ID, "", "C0NEW", "T0ACME1", nil},
		{"Slack, a known channel of its organisation", fromSlack.ID, "", "C0ACME2", "T0ACME2", nil},
		{"Slack, named workspace of its organisation", fromSlack.ID, "T0ACME2", "C0NEW", "T0ACME2", nil},
		{"Slack, another organisation's named workspace", fromSlack.ID, "T0OTHER", "C0NEW", "", tenancy.ErrOutOfReach},
		{"Slack, another organisation's known channel", fromSlack.ID, "", "C0OTHER", "", tenancy.ErrOutOfReach},
		{"Discord, a known channel of its organisation", fromDiscord.ID, "", "C0ACME2", "T0ACME2", nil},
		{"Linear, named workspace of its organisation", fromLinear.ID, "T0ACME1", "C0NEW", "T0ACME1", nil},
		{"Linear, channel of no known workspace", fromLinear.ID, "", "C0NEW", "", tenancy.ErrOutOfReach},
		{"Discord server of no organisation", fromLone.ID, "", "C0ACME2", "", tenancy.ErrOutOfReach},
		{"Discord server of no organisation, named workspace", fromLone.ID, "T0ACME1", "C0NEW", "", tenancy.ErrOutOfReach},
		{"operator, any", operator.ID, "", "C0OTHER", "", nil},
		{"operator, named", operator.ID, "T0OTHER", "C0OTHER", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := reach.Within(ctx, tt.from, replies.SlackWorkspace(store, tt.team, tt.channel))
			require.ErrorIs(t, err, tt.err)
			require.Equal(t, tt.want, in.ID)
		})
	}
}
