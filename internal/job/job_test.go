package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/job"
)

// TestPeriodicKeepsOnePerPeriod: a periodic job is one at a time within
// its period, also while running, but one left running (its replica died)
// keeps out only its own period's, not the next period's.
func TestPeriodicKeepsOnePerPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	start := time.Now().Truncate(time.Second).Add(time.Hour)
	insert := func(at time.Time) *rivertype.JobInsertResult {
		t.Helper()
		opts := job.Periodic(50 * time.Millisecond) // below River's least period: a second
		opts.ScheduledAt = at
		res, err := rc.Insert(ctx, job.Reclaim{}, opts)
		require.NoError(t, err)
		return res
	}
	first := insert(start.Add(100 * time.Millisecond))
	require.False(t, first.UniqueSkippedAsDuplicate)
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(),
		attempted_by = '{dead-replica}' WHERE id = $1`, first.Job.ID)
	require.NoError(t, err)

	require.True(t, insert(start.Add(900*time.Millisecond)).UniqueSkippedAsDuplicate, "a second one in the same period")
	require.False(t, insert(start.Add(time.Second)).UniqueSkippedAsDuplicate, "the next period's, beside the one left running")
}
