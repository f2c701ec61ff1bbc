package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestOrgSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	claude := thread.ModelRef{Provider: "anthropic", Name: "claude-sonnet-4-5"}
	set := func(org string, change func(*thread.OrgSettings)) (thread.OrgSettings, error) {
		return store.UpdateOrgSettings(ctx, org, func(s *thread.OrgSettings) error { change(s); return nil })
	}
	s, err := set("acme", func(s *thread.OrgSettings) { s.Model, s.Persona = claude, "Acme's agent." })
	require.NoError(t, err)
	require.Equal(t, claude, s.Model)
	require.False(t, s.UpdatedAt.IsZero())
	require.NoError(t, store.LinkTenants(ctx, "globex", thread.SlackTenant("T1"), thread.LinearTenant("org-2")))
	_, err = set("discord:100000000000000001", func(s *thread.OrgSettings) { s.FastModel = thread.ModelRef{Provider: "openai", Name: "gpt-4o-mini"} })
	require.NoError(t, err)

	orgs, err := store.Organisations(ctx)
	require.NoError(t, err)
	names := make([]string, len(orgs))
	for i, o := range orgs {
		names[i] = o.Organisation
	}
	require.Equal(t, []string{"acme", "discord:100000000000000001", "globex"}, names)
	require.Equal(t, "Acme's agent.", orgs[0].Persona)
	require.Empty(t, orgs[0].Tenants)
	require.Equal(t, []string{"linear:org-2", "slack:T1"}, orgs[2].Tenants)
	require.True(t, orgs[2].OrgSettings.IsZero())

	// Unsetting everything deletes the row: the organisation is on the
	// global settings, and listed only while tenants are linked into it.
	s, err = set("discord:100000000000000001", func(s *thread.OrgSettings) { s.FastModel = thread.ModelRef{} })
	require.NoError(t, err)
	require.True(t, s.IsZero())
	o, err := store.OrganisationOf(ctx, "discord:100000000000000001")
	require.NoError(t, err)
	require.Equal(t, db.Organisation{OrgSettings: thread.OrgSettings{Organisation: "discord:100000000000000001"}}, o)

	for name, change := range map[string]func(*thread.OrgSettings){
		"Not Valid":    func(s *thread.OrgSettings) { s.Model = claude },
		"teams:1":      func(s *thread.OrgSettings) { s.Model = claude },
		"half-model":   func(s *thread.OrgSettings) { s.Model = thread.ModelRef{Provider: "anthropic"} },
		"long-persona": func(s *thread.OrgSettings) { s.Persona = strings.Repeat("x", thread.MaxPersona+1) },
	} {
		_, err := set(name, change)
		require.Error(t, err, name)
	}
}

// A new thread's system prompt opens with its organisation's persona when
// it chose one, read with its memory; its turn reads the organisation's
// models with the thread.
func TestOrgPersonaAndTurnState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	const persona = "You are Acme's agent."
	claude := thread.ModelRef{Provider: "anthropic", Name: "claude-sonnet-4-5"}
	fast := thread.ModelRef{Provider: "openai", Name: "meta-llama/Llama-3-8B"}
	acmeGuild, otherGuild := dbtest.Snowflake(), dbtest.Snowflake()
	require.NoError(t, store.LinkTenants(ctx, "acme", thread.DiscordTenant(acmeGuild)))
	_, err := store.UpdateOrgSettings(ctx, "acme", func(s *thread.OrgSettings) error {
		s.Model, s.FastModel, s.Persona = claude, fast, persona
		return nil
	})
	require.NoError(t, err)
	acme := thread.MemoryScope{Tenant: thread.DiscordTenant(acmeGuild), Agent: thread.DefaultAgent, Person: "discord:alice"}
	require.NoError(t, store.SaveMemory(ctx, thread.MemoryScope{Tenant: acme.Tenant, Agent: thread.DefaultAgent}, "team", "ships on Fridays"))
	require.NoError(t, store.SaveMemory(ctx, acme, "alice", "likes tables"))

	for _, c := range []struct {
		name    string
		scope   thread.MemoryScope
		persona string
		blocks  int
	}{
		{"WithBlocks", acme, persona, 2},
		{"NoBlocks", thread.MemoryScope{Tenant: acme.Tenant, Agent: "other-agent"}, persona, 0},
		{"NoSettings", thread.MemoryScope{Tenant: thread.DiscordTenant(otherGuild), Agent: thread.DefaultAgent}, "", 0},
		{"Operator", thread.MemoryScope{Agent: thread.DefaultAgent}, "", 0},
	} {
		got, blocks, err := store.PromptMemory(ctx, c.scope)
		require.NoError(t, err, c.name)
		require.Equal(t, c.persona, got, c.name)
		require.Len(t, blocks, c.blocks, c.name)
		want, err := store.MemoryBlocks(ctx, c.scope)
		require.NoError(t, err)
		require.Equal(t, len(want), len(blocks))
		for i := range want {
			require.Equal(t, want[i].Label, blocks[i].Label)
			require.Equal(t, want[i].Content, blocks[i].Content)
			require.Equal(t, want[i].Person, blocks[i].Person)
		}
	}

	start := func(guild string) *thread.Thread {
		att := dbtest.DiscordAttachment()
		att.GuildID = guild
		th, err := thread.NewBuilder(&thread.MemoryManager{Memory: store, Persona: "The global persona."}).WithGoal("help").
			InteractiveDiscord(att).WithInitialPrompt(thread.Stitch{Content: "hi", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()}).
			Build(ctx, store)
		require.NoError(t, err)
		return th
	}
	for _, c := range []struct {
		guild, persona string
		org            thread.OrgSettings
	}{
		{acmeGuild, persona, thread.OrgSettings{Organisation: "acme", Model: claude, FastModel: fast}},
		{otherGuild, "The global persona.", thread.OrgSettings{Organisation: "discord:" + otherGuild}},
	} {
		th := start(c.guild)
		st, err := store.TurnState(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, c.org, st.Org)
		require.True(t, strings.HasPrefix(st.Chain[0].Content, c.persona+"\n\n"), st.Chain[0].Content)
	}
}
