package approval_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/thread"
)

func decider(t *testing.T, approvers ...string) (*approval.Decider, *db.Store) {
	t.Helper()
	pool := dbtest.NewPool(t)
	store := db.New(pool, dbtest.Logger(t))
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	return &approval.Decider{Store: store, Jobs: rc, Approvers: approvers, Logger: dbtest.Logger(t)}, store
}

// WEFT_APPROVERS narrows who may decide on a platform, by bare id or
// PLATFORM:ID; operators (API, console) always may; a refusal writes
// nothing.
func TestApprovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, store := decider(t, "discord:111", "222")
	th := dbtest.Thread(ctx, t, store, nil)
	for _, tc := range []struct {
		who approval.Who
		may bool
	}{
		{approval.Who{ID: "111", Via: "discord"}, true},
		{approval.Who{ID: "111", Via: "slack"}, false},
		{approval.Who{ID: "222", Via: "slack"}, true},
		{approval.Who{ID: "333", Via: "discord"}, false},
		{approval.Who{ID: "api", Via: approval.ViaAPI}, true},
		{approval.Who{ID: "console", Via: approval.ViaConsole}, true},
	} {
		require.Equal(t, tc.may, d.MayDecide(tc.who), tc.who)
	}
	a := dbtest.PendingApproval(ctx, t, store, th.ID)
	before, err := store.Thread(ctx, th.ID)
	require.NoError(t, err)
	_, err = d.Decide(ctx, approval.Request{ApprovalID: a.ID, Decision: thread.Approve, By: approval.Who{ID: "333", Name: "eve", Via: "discord"}})
	require.ErrorIs(t, err, thread.ErrNotApprover)
	after, err := store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, before.StitchCount, after.StitchCount, "a refused decision writes nothing")
	got, err := d.Decide(ctx, approval.Request{ApprovalID: a.ID, Decision: thread.Deny, Reason: "no", By: approval.Who{ID: "111", Name: "ada", Via: "discord"}})
	require.NoError(t, err)
	require.Equal(t, "denied by ada (discord): no", approval.Describe(got))
}

// The sweep denies only requests past their time.
func TestExpire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, store := decider(t)
	th := dbtest.Thread(ctx, t, store, nil)
	late := dbtest.PendingApproval(ctx, t, store, th.ID)
	other := dbtest.Thread(ctx, t, store, nil)
	onTime := dbtest.PendingApproval(ctx, t, store, other.ID)
	_, err := store.Pool().Exec(ctx, `UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE approval_id = $1`, late.ID)
	require.NoError(t, err)
	n, err := d.Expire(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err := store.Approval(ctx, late.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalDenied, got.Status)
	require.Equal(t, "weft", got.DecidedVia)
	got, err = store.Approval(ctx, onTime.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalPending, got.Status)
}
