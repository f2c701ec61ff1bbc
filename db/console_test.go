package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestStitchNotify checks that only watched threads notify, with their id
// alone, and that a new watch clears the rows of backends that are gone.
func TestStitchNotify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	watched := dbtest.Thread(ctx, t, store, nil)
	other := dbtest.Thread(ctx, t, store, nil)

	conn, err := pgx.ConnectConfig(ctx, store.Pool().Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "LISTEN "+db.StitchChannel)
	require.NoError(t, err)
	// A row of a backend long gone, which the watch below clears.
	_, err = store.Pool().Exec(ctx, `INSERT INTO stitch_watchers (thread_id, pid) VALUES ($1, -1)`, other.ID)
	require.NoError(t, err)
	require.NoError(t, store.WatchStitches(ctx, watched.ID, conn.PgConn().PID()))
	var rows int
	require.NoError(t, store.Pool().QueryRow(ctx, `SELECT count(*) FROM stitch_watchers`).Scan(&rows))
	require.Equal(t, 1, rows)

	for _, id := range []thread.Stitch{{ThreadID: other.ID}, {ThreadID: watched.ID}} {
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: id.ThreadID, Type: thread.StitchAgentThought, Content: "x"})
		require.NoError(t, err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(wait)
	require.NoError(t, err)
	require.Equal(t, watched.ID.String(), n.Payload, "the unwatched thread, appended first, sent nothing")

	require.NoError(t, store.UnwatchStitches(ctx, watched.ID, conn.PgConn().PID()))
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: watched.ID, Type: thread.StitchAgentThought, Content: "y"})
	require.NoError(t, err)
	// A notification is delivered once its transaction commits, before the
	// next query's answer on the listening connection: this round trip
	// shows none came.
	_, err = conn.Exec(ctx, "SELECT 1")
	require.NoError(t, err)
	short, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	_, err = conn.WaitForNotification(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "unwatched: no notification")
}
