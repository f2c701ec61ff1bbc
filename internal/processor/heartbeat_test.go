package processor

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	p := &Processor{cfg: Config{Heartbeat: 10 * time.Millisecond, LeaseTTL: 300 * time.Millisecond}, store: store, logger: slog.New(slog.DiscardHandler)}
	p.heartbeat = &heartbeat{p: p, turns: map[db.TurnLease]*beat{}}
	// start takes a new thread's lease for owner, as a turn does, and
	// puts the turn in the heartbeat.
	start := func(owner string) (uuid.UUID, *thread.Thread, context.Context, func()) {
		th := dbtest.Thread(ctx, t, store, nil)
		st, err := store.TurnState(ctx, th.ID)
		require.NoError(t, err)
		got, err := store.StartTurn(ctx, th.ID, db.TurnStart{Owner: owner, TTL: p.cfg.LeaseTTL,
			Status: st.Thread.Status, Head: st.Chain[len(st.Chain)-1].ID, Running: true})
		require.NoError(t, err)
		turnCtx, cancel := context.WithCancelCause(ctx)
		leave := p.heartbeat.join(th.ID, owner, cancel)
		t.Cleanup(leave)
		return th.ID, got, turnCtx, leave
	}
	cancelled := func(turnCtx context.Context) error {
		t.Helper()
		select {
		case <-turnCtx.Done():
			return context.Cause(turnCtx)
		case <-time.After(10 * time.Second):
			t.Fatal("the heartbeat never cancelled the turn")
			return nil
		}
	}

	renewed, first, renewedCtx, leaveRenewed := start("renewed")
	aborted, _, abortedCtx, _ := start("aborted")
	lost, _, lostCtx, _ := start("lost")

	_, err := store.SetStatus(ctx, aborted, thread.StatusChange{To: thread.StatusAborted})
	require.NoError(t, err)
	require.ErrorIs(t, cancelled(abortedCtx), thread.ErrAborted)

	require.NoError(t, store.ReleaseLease(ctx, lost, "lost"))
	require.ErrorIs(t, cancelled(lostCtx), errLeaseLost)

	require.Eventually(t, func() bool {
		th, err := store.Thread(ctx, renewed)
		require.NoError(t, err)
		return th.LeaseExpires.After(first.LeaseExpires)
	}, 10*time.Second, 10*time.Millisecond, "the lease is renewed")
	require.NoError(t, renewedCtx.Err(), "a turn that holds its lease runs on")

	leaveRenewed()
	p.heartbeat.mu.Lock()
	defer p.heartbeat.mu.Unlock()
	require.Empty(t, p.heartbeat.turns)
	require.Nil(t, p.heartbeat.idle, "the loop stops with the last turn")
}
