package db_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// roundTrips counts what a pool sends: single statements, and pipelined
// batches (one round trip each, however many statements they hold).
type roundTrips struct{ statements, batches, batched atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.statements.Add(1)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.batches.Add(1)
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	r.batched.Add(1)
}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestPipelinesStayOneRoundTrip checks that the generated statements a
// Write or a TurnState needs go out in one batch, not one by one.
func TestPipelinesStayOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	require.NoError(t, err)
	trips := &roundTrips{}
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := db.New(pool, dbtest.Logger(t))

	meta := dbtest.LinearAttachment()
	d := linearDraft(t, meta)
	_, err = store.Write(ctx, db.Write{New: d, Inbound: linearInbound("d1", meta.SessionID),
		Outbox:  []thread.Outbox{ackOutbox(meta.SessionID)},
		Session: &db.SessionChange{SessionID: meta.SessionID, Status: thread.SessionActive},
		Status:  &thread.StatusChange{To: thread.StatusRunning}})
	require.NoError(t, err)
	require.Equal(t, int64(0), trips.statements.Load(), "statements sent alone")
	require.Equal(t, int64(1), trips.batches.Load(), "batches")
	// The thread, its attachment, two stitches, the ledger entry, the
	// outbox row, the session and the status.
	require.Equal(t, int64(8), trips.batched.Load(), "statements in the batch")

	st, err := store.TurnState(ctx, d.Thread.ID)
	require.NoError(t, err)
	require.Len(t, st.Chain, 2)
	require.Equal(t, thread.PlatformLinear, st.Platform)
	require.Equal(t, int64(0), trips.statements.Load(), "statements sent alone")
	require.Equal(t, int64(2), trips.batches.Load(), "batches")
}
