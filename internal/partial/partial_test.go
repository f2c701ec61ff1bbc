package partial_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
)

// watch LISTENs on the stitch channel and watches th, returning a wait for
// th's next notification.
func watch(ctx context.Context, t *testing.T, store *db.Store, th *thread.Thread) func() {
	t.Helper()
	conn, err := pgx.ConnectConfig(ctx, store.Pool().Config().ConnConfig.Copy())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "LISTEN "+db.StitchChannel)
	require.NoError(t, err)
	require.NoError(t, store.WatchStitches(ctx, th.ID, conn.PgConn().PID()))
	return func() {
		t.Helper()
		n, err := conn.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, th.ID.String(), n.Payload)
	}
}

// TestWriterThrottles hands over many texts while the interval holds the
// next write back: one write carries the first, nothing more is written
// until Close, which deletes the row.
func TestWriterThrottles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	notified := watch(ctx, t, store, th)

	w := partial.New(partial.Deps{Store: store, Logger: logtest.New(t), Interval: time.Hour})
	a := w.Open(ctx, th, 7)
	texts := []string{"a", "a b", "a b c", "a b c d"}
	for _, text := range texts {
		a.Text(text)
	}
	notified()
	p, err := store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, int64(7), p.AfterSeq)
	require.Equal(t, int64(1), p.Version, "one write an interval")
	require.Contains(t, texts, p.Text)

	a.Close()
	notified()
	p, err = store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Nil(t, p)
}

// TestWriterWritesTheNewestText lets every text through and waits for the
// last to be written.
func TestWriterWritesTheNewestText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	notified := watch(ctx, t, store, th)

	w := partial.New(partial.Deps{Store: store, Logger: logtest.New(t), Interval: time.Millisecond})
	a := w.Open(ctx, th, 3)
	a.Text("the")
	a.Text("the answer")
	for {
		notified()
		p, err := store.Partial(ctx, th.ID)
		require.NoError(t, err)
		require.NotNil(t, p)
		if p.Text == "the answer" {
			break
		}
		require.Equal(t, "the", p.Text)
	}
	a.Close()
}

// TestWriterUnwatched writes nothing for a thread nobody watches, and a
// call that never streamed closes at once.
func TestWriterUnwatched(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)

	w := partial.New(partial.Deps{Store: store, Logger: logtest.New(t), Interval: time.Millisecond})
	w.Open(ctx, th, 1).Close()
	a := w.Open(ctx, th, 1)
	a.Text("nobody reads this")
	a.Close()
	p, err := store.Partial(ctx, th.ID)
	require.NoError(t, err)
	require.Nil(t, p)
}
