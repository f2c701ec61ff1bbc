package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestPartial checks that partial text is written only for a watched
// thread, that each write and the clear notify its watchers, and that a
// clear spares a later call's text.
func TestPartial(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)

	wrote, err := store.SetPartial(ctx, th.ID, 3, "unseen")
	require.NoError(t, err)
	require.False(t, wrote, "nobody watches")
	p, err := store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Nil(t, p)

	conn, err := pgx.ConnectConfig(ctx, store.Pool().Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "LISTEN "+db.StitchChannel)
	require.NoError(t, err)
	require.NoError(t, store.WatchStitches(ctx, th.ID, conn.PgConn().PID()))
	notified := func() {
		t.Helper()
		n, err := conn.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, th.ID.String(), n.Payload)
	}

	for i, text := range []string{"the ", "the answer"} {
		wrote, err := store.SetPartial(ctx, th.ID, 3, text)
		require.NoError(t, err)
		require.True(t, wrote)
		notified()
		p, err := store.Partial(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, &db.Partial{AfterSeq: 3, Text: text, Version: int64(i + 1)}, p)
	}

	require.NoError(t, store.ClearPartial(ctx, th.ID, 2)) // an older call's
	p, err = store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.NotNil(t, p)
	require.NoError(t, store.ClearPartial(ctx, th.ID, 3))
	notified()
	p, err = store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Nil(t, p)
}

// TestPartialVoidOnceAnswered leaves a row behind as a crash between the
// recorded answer and the clear would: it reads as nil.
func TestPartialVoidOnceAnswered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	_, err := store.Pool().Exec(ctx, `INSERT INTO stitch_partials (thread_id, after_seq, text) VALUES ($1, $2, 'left behind')`, th.ID, th.StitchCount)
	require.NoError(t, err)

	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchAgentThought, Content: "not an outcome"})
	require.NoError(t, err)
	p, err := store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.NotNil(t, p, "still streaming, as far as the chain says")

	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall, Content: "the answer"})
	require.NoError(t, err)
	p, err = store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Nil(t, p)
}
