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
	require.Nil(t, mc.Linear)
	require.NotNil(t, mc.Discord)
	require.Equal(t, att.CreatedBy, mc.Discord.CreatedBy)

	mc, err = store.MemoryContext(ctx, uuid.New(), 2)
	require.NoError(t, err, "an unknown thread is on no platform")
	require.Zero(t, mc.Tenant)
	require.Empty(t, mc.Recent)
	require.Nil(t, mc.Linear)
	require.Nil(t, mc.Discord)
}
