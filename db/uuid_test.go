package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

// TestUUID: ids go to Postgres and back as they are, in either format,
// alone, nullable and in arrays.
func TestUUID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := acquire(t)

	u, v := uuid.New(), uuid.New()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var got uuid.UUID
		var text string
		require.NoError(t, conn.QueryRow(ctx, "SELECT $1::uuid, $1::uuid::text", mode, u).Scan(&got, &text))
		require.Equal(t, u, got)
		require.Equal(t, u.String(), text)

		var some, none *uuid.UUID
		require.NoError(t, conn.QueryRow(ctx, "SELECT $1::uuid, $2::uuid", mode, &v, (*uuid.UUID)(nil)).Scan(&some, &none))
		require.Equal(t, &v, some)
		require.Nil(t, none)
	}
	var ids []uuid.UUID
	require.NoError(t, conn.QueryRow(ctx, "SELECT $1::uuid[]", []uuid.UUID{u, v}).Scan(&ids))
	require.Equal(t, []uuid.UUID{u, v}, ids)
	var text string
	require.NoError(t, conn.QueryRow(ctx, "SELECT $1::text", u).Scan(&text), "a uuid passed as text")
	require.Equal(t, u.String(), text)
}

// TestUUIDAllocs: an id costs no allocation to encode or scan (pgx alone
// formats and parses each as text, building an error on the way). Not
// parallel: AllocsPerRun counts the whole process's.
func TestUUIDAllocs(t *testing.T) {
	m := acquire(t).Conn().TypeMap()
	u := uuid.New()
	var value any = u
	buf := make([]byte, 0, 16)
	require.Zero(t, testing.AllocsPerRun(100, func() {
		if _, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, value, buf[:0]); err != nil {
			panic(err)
		}
	}), "allocations to encode a uuid")
	var got uuid.UUID
	target := any(&got)
	require.Zero(t, testing.AllocsPerRun(100, func() {
		if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, u[:], target); err != nil {
			panic(err)
		}
	}), "allocations to scan a uuid")
	require.Equal(t, u, got)
}

func acquire(t *testing.T) *pgxpool.Conn {
	conn, err := dbtest.NewPool(t).Acquire(context.Background())
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	return conn
}
