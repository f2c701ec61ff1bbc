package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

func TestClaimShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OneOwnerAtATime", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		ok, err := store.ClaimShard(ctx, 0, 2, "a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = store.ClaimShard(ctx, 0, 2, "b", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "a live lease is not taken")
		ok, err = store.ClaimShard(ctx, 1, 2, "b", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "shards are leased apart")
		ok, err = store.ClaimShard(ctx, 0, 2, "a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "the owner renews")
	})

	t.Run("LapsedLeaseIsTaken", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		ok, err := store.ClaimShard(ctx, 0, 1, "a", time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok)
		require.Eventually(t, func() bool {
			ok, err := store.ClaimShard(ctx, 0, 1, "b", time.Minute)
			require.NoError(t, err)
			return ok
		}, 10*time.Second, 5*time.Millisecond)
		ok, err = store.ClaimShard(ctx, 0, 1, "a", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "the old owner lost it")
	})

	t.Run("ReleaseFreesAtOnce", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		ok, err := store.ClaimShard(ctx, 0, 1, "a", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, store.ReleaseShard(ctx, 0, "b"), "releasing another's lease is a no-op")
		ok, err = store.ClaimShard(ctx, 0, 1, "b", time.Hour)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, store.ReleaseShard(ctx, 0, "a"))
		ok, err = store.ClaimShard(ctx, 0, 1, "b", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
	})

	t.Run("ShardOutOfRangeIsInvalid", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		_, err := store.ClaimShard(ctx, 2, 2, "a", time.Minute)
		require.Error(t, err)
	})
}
