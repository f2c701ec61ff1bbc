package tools_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// guildsReader knows the server of Discord threads weft does not track.
type guildsReader struct {
	tools.DiscordReader // the reads Reach never makes
	guilds              map[string]string
}

func (r guildsReader) Channel(_ context.Context, id string) (tools.DiscordChannel, error) {
	g, ok := r.guilds[id]
	if !ok {
		return tools.DiscordChannel{}, fmt.Errorf("channel %s: %w", id, thread.ErrNotFound)
	}
	return tools.DiscordChannel{ID: id, GuildID: g, IsThread: true}, nil
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
	reader := guildsReader{guilds: map[string]string{untrackedA: guildA, untrackedB: guildB, untrackedC: guildC}}

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
			reach := &tools.Reach{Store: store, Reader: reader, Guilds: tt.guilds}
			err := reach.Check(ctx, tt.from.th.ID, tt.target)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tools.ErrOutOfReach)
			}
		})
	}
}

// TestReachSlack: weft reads Slack with one workspace's token, so only a
// Slack conversation, or the operator's, may read a Slack thread by its
// channel and ts.
func TestReachSlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	reach := &tools.Reach{Store: store}
	for _, tt := range []struct {
		name string
		opts *dbtest.ThreadOpts
		want error
	}{
		{"Slack", &dbtest.ThreadOpts{Slack: &thread.SlackAttachment{TeamID: "T0123", ChannelID: "C0123", ThreadTS: "1700000000.000100", CreatedBy: "U0123"}}, nil},
		{"Operator", nil, nil},
		{"Discord", &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()}, tools.ErrOutOfReach},
		{"Linear", &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()}, tools.ErrOutOfReach},
	} {
		t.Run(tt.name, func(t *testing.T) {
			th := dbtest.Thread(ctx, t, store, tt.opts)
			require.ErrorIs(t, reach.CheckSlack(ctx, th.ID), tt.want)
		})
	}
}
