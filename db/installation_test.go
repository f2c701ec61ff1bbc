package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestLinearInstallation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	expires := time.Now().Add(24 * time.Hour).Truncate(time.Microsecond)
	in := db.LinearInstallation{
		OrganizationID: "org-1", AppUserID: "app-1",
		AccessTokenEnc: []byte("sealed-access"), RefreshTokenEnc: []byte("sealed-refresh"),
		ExpiresAt: expires, Scopes: []string{"read", "write"},
	}

	_, err := store.LinearInstallation(ctx, "org-1")
	require.ErrorIs(t, err, thread.ErrNotFound)
	require.ErrorIs(t, store.SaveLinearInstallation(ctx, db.LinearInstallation{OrganizationID: "org-1"}), thread.ErrInvalid)

	require.NoError(t, store.SaveLinearInstallation(ctx, in))
	got, err := store.LinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.True(t, got.Active)
	require.Equal(t, in.AccessTokenEnc, got.AccessTokenEnc)
	require.Equal(t, in.RefreshTokenEnc, got.RefreshTokenEnc)
	require.True(t, expires.Equal(got.ExpiresAt))
	require.Equal(t, in.Scopes, got.Scopes)
	require.True(t, got.RevokedAt.IsZero())

	require.NoError(t, store.UpdateLinearTokens(ctx, "org-1", []byte("a2"), []byte("r2"), expires.Add(time.Hour)))
	require.ErrorIs(t, store.UpdateLinearTokens(ctx, "org-unknown", []byte("a"), nil, time.Time{}), thread.ErrNotFound)
	err = store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		locked, err := tx.LockLinearInstallation(ctx, "org-1")
		require.NoError(t, err)
		require.Equal(t, []byte("a2"), locked.AccessTokenEnc)
		require.Equal(t, []byte("r2"), locked.RefreshTokenEnc)
		return nil
	})
	require.NoError(t, err)

	done, err := store.DeactivateLinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.True(t, done)
	done, err = store.DeactivateLinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.False(t, done, "a second revoke changes nothing")
	got, err = store.LinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.False(t, got.Active)
	require.False(t, got.RevokedAt.IsZero())

	// A re-install makes it active again with the new tokens.
	in.AccessTokenEnc = []byte("a3")
	require.NoError(t, store.SaveLinearInstallation(ctx, in))
	got, err = store.LinearInstallation(ctx, "org-1")
	require.NoError(t, err)
	require.True(t, got.Active)
	require.True(t, got.RevokedAt.IsZero())
	require.Equal(t, []byte("a3"), got.AccessTokenEnc)
}
