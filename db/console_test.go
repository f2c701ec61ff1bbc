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

// TestConsoleThreads checks the stuck conditions the console lists and
// the Stuck filter.
func TestConsoleThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	pool := store.Pool()
	run := func(th *thread.Thread) {
		_, err := store.SetStatus(ctx, th.ID, thread.StatusChange{To: thread.StatusRunning})
		require.NoError(t, err)
	}
	age := func(th *thread.Thread) {
		_, err := pool.Exec(ctx, `UPDATE threads SET last_activity_at = now() - interval '1 hour' WHERE thread_id = $1`, th.ID)
		require.NoError(t, err)
	}

	lapsed := dbtest.Thread(ctx, t, store, nil)
	run(lapsed)
	age(lapsed)
	fresh := dbtest.Thread(ctx, t, store, nil) // running, but just now
	run(fresh)
	unanswered := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
	age(unanswered) // pending, its initial prompt unanswered for an hour
	stranded := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	run(stranded)
	_, err := store.SetStatus(ctx, stranded.ID, thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle})
	require.NoError(t, err)
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: stranded.ID, Type: thread.StitchAgentThought, Content: "answered"})
	require.NoError(t, err)
	_, err = store.InsertOutbox(ctx, thread.Outbox{ThreadID: stranded.ID, Platform: thread.PlatformLinear, Target: "s",
		Kind: thread.OutboxResponse, Body: []byte(`{"text":"hi"}`)})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE platform_deliveries SET next_attempt_at = now() - interval '1 hour'`)
	require.NoError(t, err)

	all, err := store.ConsoleThreads(ctx, db.ConsoleFilter{Grace: 2 * time.Minute})
	require.NoError(t, err)
	require.Len(t, all, 4)
	byID := map[string]db.ConsoleThread{}
	for _, c := range all {
		byID[c.ID.String()] = c
	}
	require.True(t, byID[lapsed.ID.String()].LeaseLapsed)
	require.False(t, byID[fresh.ID.String()].Stuck())
	require.True(t, byID[unanswered.ID.String()].Unanswered)
	require.True(t, byID[unanswered.ID.String()].OnDiscord)
	require.True(t, byID[stranded.ID.String()].Stranded)
	require.False(t, byID[stranded.ID.String()].Unanswered)
	require.True(t, byID[stranded.ID.String()].OnLinear)

	stuck, err := store.ConsoleThreads(ctx, db.ConsoleFilter{Grace: 2 * time.Minute, Stuck: true})
	require.NoError(t, err)
	require.Len(t, stuck, 3)

	// Keyset paging walks every thread once.
	var seen []string
	f := db.ConsoleFilter{Limit: 1}
	for {
		page, err := store.ConsoleThreads(ctx, f)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		seen = append(seen, page[0].ID.String())
		f.AfterUpdated, f.AfterID = page[0].UpdatedAt, page[0].ID
	}
	require.Len(t, seen, 4)
	require.ElementsMatch(t, []string{lapsed.ID.String(), fresh.ID.String(), unanswered.ID.String(), stranded.ID.String()}, seen)
}
