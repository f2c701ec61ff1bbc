package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
)

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t) // already migrated up by the template
	m, err := db.NewMigrator(store.Pool(), dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })

	tables := func() int {
		var n int
		require.NoError(t, store.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`).Scan(&n))
		return n
	}
	upTables := tables()
	require.Greater(t, upTables, 8)

	down, err := m.DownTo(ctx, 0)
	require.NoError(t, err)
	require.NotEmpty(t, down)
	require.Zero(t, tables(), "down removes everything up made")

	up, err := m.Up(ctx)
	require.NoError(t, err)
	require.Len(t, up, len(down))
	require.Equal(t, upTables, tables())

	status, err := m.Status(ctx)
	require.NoError(t, err)
	for _, s := range status {
		require.Equal(t, "applied", string(s.State), s.Source.Path)
	}
	require.NoError(t, store.Ping(ctx), "closing the migrator left the pool open")
}
