package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestFollow checks that a Follower wakes on its own thread's stitches
// alone, passing over the notifications of another thread watched on the
// same channel, and that Close removes its watch.
func TestFollow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	mine := dbtest.Thread(ctx, t, store, nil)
	other := dbtest.Thread(ctx, t, store, nil)
	connect := func() *pgx.Conn {
		conn, err := pgx.ConnectConfig(ctx, store.Pool().Config().ConnConfig.Copy())
		require.NoError(t, err)
		return conn
	}
	f, err := store.Follow(ctx, connect(), mine.ID)
	require.NoError(t, err)
	g, err := store.Follow(ctx, connect(), other.ID)
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close(ctx)) }()

	for _, id := range []thread.Stitch{{ThreadID: other.ID}, {ThreadID: mine.ID}} {
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: id.ThreadID, Type: thread.StitchAgentThought, Content: "x"})
		require.NoError(t, err)
	}
	news, err := f.Next(ctx, 30*time.Second)
	require.NoError(t, err)
	require.True(t, news, "its own thread's stitch wakes it")
	// The other thread's notification came first and was passed over, and
	// nothing else was written: an idle wait ends with no news.
	news, err = f.Next(ctx, 100*time.Millisecond)
	require.NoError(t, err)
	require.False(t, news)

	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.Next(ended, time.Minute)
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, f.Close(ended), "closes although its caller's context has ended")
	var rows int
	require.NoError(t, store.Pool().QueryRow(ctx, `SELECT count(*) FROM stitch_watchers WHERE thread_id = $1`, mine.ID).Scan(&rows))
	require.Zero(t, rows)
}
