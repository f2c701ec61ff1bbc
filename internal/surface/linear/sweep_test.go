package linear_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// The Linear sweep marks stale the sessions idle past StaleAfter, as
// Linear shows them, and no others; Linear need not be configured.
func TestSweepMarksIdleSessionsStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	app, err := surfacelinear.New(surfacelinear.Config{}, store, dbtest.Logger(t))
	require.NoError(t, err)
	idle, busy := dbtest.LinearAttachment(), dbtest.LinearAttachment()
	idleThread := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: idle})
	busyThread := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: busy})
	_, err = store.Pool().Exec(ctx, `UPDATE linear_thread_metadata SET last_activity_at = now() - $2 * interval '1 second' WHERE session_id = $1`,
		idle.SessionID, surfacelinear.StaleAfter.Seconds()+60)
	require.NoError(t, err)

	s := app.Sweep()
	require.Equal(t, "stale_linear_sessions", s.Name)
	n, err := s.Run(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err := store.LinearAttachment(ctx, idleThread.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionStale, got.SessionStatus)
	got, err = store.LinearAttachment(ctx, busyThread.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionPending, got.SessionStatus)
}
