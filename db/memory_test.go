package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestMemoryContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
	for _, content := range []string{"one", "two", "three"} {
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: content,
			Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()})
		require.NoError(t, err)
	}

	mc, err := store.MemoryContext(ctx, th.ID, 2)
	require.NoError(t, err)
	require.Equal(t, thread.DiscordTenant(att.GuildID), mc.Tenant)
	require.Len(t, mc.Recent, 2)
	require.Equal(t, []string{"two", "three"}, []string{mc.Recent[0].Content, mc.Recent[1].Content}, "the latest, in chain order")
	require.Equal(t, thread.PersonOn(thread.PlatformDiscord, att.CreatedBy), mc.Starter())
	_, org, err := store.ThreadTenant(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, org, mc.Organisation)

	// Linear's starter comes first: the session's creator.
	lin := dbtest.LinearAttachment()
	onLinear := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: lin})
	mc, err = store.MemoryContext(ctx, onLinear.ID, 2)
	require.NoError(t, err)
	require.Equal(t, thread.LinearTenant(lin.WorkspaceID), mc.Tenant)
	require.Equal(t, thread.PersonOn(thread.PlatformLinear, lin.CreatedByUserID), mc.Starter())

	mc, err = store.MemoryContext(ctx, uuid.New(), 2)
	require.NoError(t, err, "an unknown thread is on no platform")
	require.Zero(t, mc.Tenant)
	require.Empty(t, mc.Recent)
	require.Empty(t, mc.Starter())
	require.Empty(t, mc.Organisation)
}

// TestMemoryContextWithBlocks: the blocks read with a thread's memory
// context are, for each person its scope can name (the organisation alone,
// its starter, an author of its latest stitches), exactly what
// MemoryBlocks reads for that scope; another person's, agent's or
// organisation's never come with them.
func TestMemoryContextWithBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
	for _, author := range []string{"300000000000000001", "300000000000000002", "300000000000000003"} {
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: "hi from " + author,
			Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(), Author: &thread.Author{ID: author, Name: author}})
		require.NoError(t, err)
	}
	tenant := thread.DiscordTenant(att.GuildID)
	starter := thread.PersonOn(thread.PlatformDiscord, att.CreatedBy)
	const recent = 2 // the first author is out of reach
	save := func(s thread.MemoryScope, label string) {
		require.NoError(t, store.SaveMemory(ctx, s, label, label+" content"))
	}
	scope := func(person string) thread.MemoryScope {
		return thread.MemoryScope{Tenant: tenant, Agent: thread.DefaultAgent, Person: person}
	}
	save(scope(""), "org_a")
	save(scope(""), "org_b")
	save(scope(starter), "starter_note")
	save(scope("discord:300000000000000003"), "latest_note")
	save(scope("discord:300000000000000002"), "earlier_note")
	save(scope("discord:300000000000000001"), "out_of_reach")
	save(scope("discord:399999999999999999"), "someone_else")
	save(thread.MemoryScope{Tenant: tenant, Agent: "other-agent"}, "other_agent")
	save(thread.MemoryScope{Tenant: thread.DiscordTenant(dbtest.Snowflake()), Agent: thread.DefaultAgent}, "other_org")

	mc, err := store.MemoryContextWithBlocks(ctx, th.ID, recent, thread.DefaultAgent)
	require.NoError(t, err)
	require.Equal(t, tenant, mc.Tenant)
	require.Len(t, mc.Recent, recent)
	for _, person := range []string{"", starter, "discord:300000000000000003", "discord:300000000000000002"} {
		want, err := store.MemoryBlocks(ctx, scope(person))
		require.NoError(t, err)
		require.NotEmpty(t, want)
		require.Equal(t, want, mc.Blocks(person), "person %q", person)
	}
	var labels []string
	for _, b := range mc.Blocks("discord:399999999999999999") {
		labels = append(labels, b.Label)
	}
	require.Equal(t, []string{"org_a", "org_b"}, labels, "a person the context does not name reads the organisation's alone")

	plain, err := store.MemoryContext(ctx, th.ID, recent)
	require.NoError(t, err)
	require.Empty(t, plain.Blocks(""), "without an agent no blocks are read")

	none, err := store.MemoryContextWithBlocks(ctx, uuid.New(), recent, thread.DefaultAgent)
	require.NoError(t, err)
	want, err := store.MemoryBlocks(ctx, thread.MemoryScope{Agent: thread.DefaultAgent})
	require.NoError(t, err)
	require.Equal(t, want, none.Blocks(""), "a thread on no platform reads the blocks of no organisation")
}
