package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// TestMemoryStopsAtTheOrganisation: what save_memory keeps in a thread of
// one organisation reaches the prompts of that organisation's new threads
// and never another's, from either side; about=person reaches only that
// person's.
func TestMemoryStopsAtTheOrganisation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	save, read := tools.Memory(store)[0], tools.Memory(store)[1]
	call := func(tool tools.Tool, id uuid.UUID, args any) string {
		t.Helper()
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		out, err := tool.Handler(ctx, tools.Call{ThreadID: id, AgentName: thread.DefaultAgent, Arguments: raw})
		require.NoError(t, err)
		return out
	}
	linearIn := func(workspace, user string) *thread.LinearAttachment {
		att := dbtest.LinearAttachment()
		att.WorkspaceID, att.CreatedByUserID = workspace, user
		return att
	}
	discordIn := func(guild, user string) *thread.DiscordAttachment {
		att := dbtest.DiscordAttachment()
		att.GuildID, att.CreatedBy = guild, user
		return att
	}
	// A prompt a new thread of this shape would start with.
	prompt := func(b *thread.Builder) string {
		t.Helper()
		d, err := b.WithGoal("anything").Draft(ctx)
		require.NoError(t, err)
		return d.Stitches[0].Content
	}
	mm := &thread.MemoryManager{Memory: store}
	guildB := dbtest.Snowflake()

	inA := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: linearIn("org-a", "alice")})
	inB := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: discordIn(guildB, "bob")})
	call(save, inA.ID, map[string]string{"label": "deploys", "content": "A deploys on Fridays"})
	call(save, inB.ID, map[string]string{"label": "deploys", "content": "B deploys on Mondays"})
	call(save, inA.ID, map[string]string{"label": "style", "content": "alice wants bullets", "about": "person"})

	t.Run("ReadMemoryReadsItsOwn", func(t *testing.T) {
		require.Contains(t, call(read, inA.ID, map[string]string{}), "A deploys on Fridays")
		require.NotContains(t, call(read, inA.ID, map[string]string{}), "B deploys")
		require.Contains(t, call(read, inA.ID, map[string]string{}), "alice wants bullets", "the starter's own block")
		require.Contains(t, call(read, inB.ID, map[string]string{}), "B deploys on Mondays")
		require.NotContains(t, call(read, inB.ID, map[string]string{}), "A deploys")
		require.NotContains(t, call(read, inB.ID, map[string]string{}), "alice wants bullets")
	})
	t.Run("PromptsOfNewThreads", func(t *testing.T) {
		a := prompt(thread.NewBuilder(mm).InteractiveLinear(linearIn("org-a", "alice")))
		require.Contains(t, a, "A deploys on Fridays")
		require.Contains(t, a, "alice wants bullets")
		require.NotContains(t, a, "B deploys")

		aOther := prompt(thread.NewBuilder(mm).InteractiveLinear(linearIn("org-a", "carol")))
		require.Contains(t, aOther, "A deploys on Fridays")
		require.NotContains(t, aOther, "alice wants bullets", "a person's block is theirs")

		b := prompt(thread.NewBuilder(mm).InteractiveDiscord(discordIn(guildB, "bob")))
		require.Contains(t, b, "B deploys on Mondays")
		require.NotContains(t, b, "A deploys")
		require.NotContains(t, b, "alice wants bullets")

		operator := prompt(thread.NewBuilder(mm).Autonomous())
		require.NotContains(t, operator, "deploys")
	})
	t.Run("SlackTenantIsItsOwnToo", func(t *testing.T) {
		// Slack threads name their workspace; unlinked, it sees neither.
		s := prompt(thread.NewBuilder(mm).Autonomous().WithTenant(thread.SlackTenant("T0123")))
		require.NotContains(t, s, "deploys")
	})
	t.Run("LinkedTheyShare", func(t *testing.T) {
		require.NoError(t, store.LinkTenants(ctx, "acme", thread.LinearTenant("org-a"), thread.DiscordTenant(guildB)))
		call(save, inB.ID, map[string]string{"label": "oncall", "content": "acme on-call is Dana"})
		a := prompt(thread.NewBuilder(mm).InteractiveLinear(linearIn("org-a", "alice")))
		require.Contains(t, a, "acme on-call is Dana")
	})
}

func TestPersonIsTheLatestAuthor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
	_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: "remember I like tables",
		Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(), Author: &thread.Author{ID: "300000000000000009", Name: "erin"}})
	require.NoError(t, err)
	raw := json.RawMessage(`{"label":"format","content":"erin likes tables","about":"person"}`)
	_, err = tools.Memory(store)[0].Handler(ctx, tools.Call{ThreadID: th.ID, AgentName: thread.DefaultAgent, Arguments: raw})
	require.NoError(t, err)
	blocks, err := store.MemoryBlocks(ctx, thread.MemoryScope{Tenant: thread.DiscordTenant(att.GuildID), Agent: thread.DefaultAgent,
		Person: "discord:300000000000000009"})
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	require.Equal(t, "discord:300000000000000009", blocks[0].Person)
}

// TestSaveMemoryRefusesWhatCannotBeStored: a label or a content the table
// would refuse is refused before writing, with what is allowed, never with
// Postgres's constraint text.
func TestSaveMemoryRefusesWhatCannotBeStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	save := tools.Memory(store)[0]
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	tests := []struct {
		name, label, content, want string
	}{
		{"Spaces", "team conventions", "x", "found ' '"},
		{"Capitals", "Deploys", "x", "found 'D'"},
		{"LeadingDot", ".deploys", "x", "start with a letter or digit"},
		{"Empty", "", "x", "label is empty"},
		{"TooLong", strings.Repeat("a", 65), "x", "at most 64"},
		{"ContentTooLarge", "deploys", strings.Repeat("a", 64<<10+1), "at most 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]string{"label": tt.label, "content": tt.content})
			require.NoError(t, err)
			_, err = save.Handler(ctx, tools.Call{ThreadID: th.ID, AgentName: thread.DefaultAgent, Arguments: raw})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "constraint")
		})
	}
	raw, err := json.Marshal(map[string]string{"label": "team_conventions.v2-" + strings.Repeat("a", 44), "content": strings.Repeat("a", 64<<10)})
	require.NoError(t, err)
	_, err = save.Handler(ctx, tools.Call{ThreadID: th.ID, AgentName: thread.DefaultAgent, Arguments: raw})
	require.NoError(t, err, "the longest label and content allowed")
}
