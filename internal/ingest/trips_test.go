package ingest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/bench/dbbench"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// TestRoundTrips bounds what one event costs in trips to Postgres, counted
// by a pgx tracer on the pool (counts, not timings): under load a
// transaction mostly waits on its round trips while holding a connection.
// The draft's memory read is outside the transaction and counted too.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	tests := []struct {
		name string
		// event sends the i-th event through the ingester.
		event func(t *testing.T, b *linearBundle, i int)
		// max bounds the round trips and statements; every event commits
		// once.
		maxTrips, maxStatements int64
	}{
		{
			// The draft's memory read, begin, the ledger entry and the
			// thread in one batch, the turn's job and River's notify of
			// it, commit; before: the ledger entry, a savepoint around the
			// thread and the entry's link to it apart (10 round trips).
			name: "DiscordMention",
			event: func(t *testing.T, b *linearBundle, i int) {
				att := dbtest.DiscordAttachment()
				created, err := b.discord().DiscordConversation(ctx, *att, mention(att))
				require.NoError(t, err)
				require.True(t, created)
			},
			maxTrips: 6, maxStatements: 12,
		},
		{
			// A Linear session's created webhook: the draft's read, begin,
			// its writes in one batch, its jobs in one insert and River's
			// notify, commit.
			name: "LinearCreated",
			event: func(t *testing.T, b *linearBundle, i int) {
				id := fmt.Sprintf("s%d", i)
				res, err := b.ing.Record(ctx, surfacelinear.Created(delivery(id, "created"), session(id)))
				require.NoError(t, err)
				require.False(t, res.Duplicate)
			},
			maxTrips: 6, maxStatements: 12,
		},
		{
			// The CLI's and API's door: the draft's read, begin, the
			// thread, its turn's job and River's notify, commit; before: a
			// savepoint around the thread (8 round trips).
			name: "StartThread",
			event: func(t *testing.T, b *linearBundle, i int) {
				_, err := b.ing.StartThread(ctx, b.ing.Builder().WithGoal("count the trips").Autonomous().
					WithInitialPrompt(thread.Stitch{Content: "count the trips", Source: thread.PlatformCLI}))
				require.NoError(t, err)
			},
			maxTrips: 6, maxStatements: 10,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trips := &dbbench.Trips{}
			pool, err := dbbench.OpenCounting(ctx, dbtest.URL(t), trips)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			b := newLinearBundle(t, pool, dbtest.Logger(t), "")
			// The first event pays River's one-time version probe.
			tc.event(t, b, 0)
			before := trips.Count()
			tc.event(t, b, 1)
			got := trips.Count().Sub(before)
			t.Logf("%s: %d round trips, %d statements, %d commits", tc.name, got.RoundTrips, got.Statements, got.Commits)
			require.LessOrEqual(t, got.RoundTrips, tc.maxTrips, "round trips")
			require.LessOrEqual(t, got.Statements, tc.maxStatements, "statements")
			require.Equal(t, int64(1), got.Commits, "commits")
		})
	}
}
