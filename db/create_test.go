package db_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
)

func TestCreateDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, err := url.Parse(dbtest.ServerURL())
	require.NoError(t, err)
	name := "weft_create_" + uuid.NewString()[:8]
	u.Path = "/" + name
	admin, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
		require.NoError(t, err)
		require.NoError(t, admin.Close(context.Background()))
	})

	created, err := db.CreateDatabase(ctx, u.String())
	require.NoError(t, err)
	require.True(t, created)
	conn, err := pgx.Connect(ctx, u.String())
	require.NoError(t, err, "the database exists")
	require.NoError(t, conn.Close(ctx))

	created, err = db.CreateDatabase(ctx, u.String())
	require.NoError(t, err)
	require.False(t, created, "an existing database is left alone")
}
