package linear_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// Describe names a thread's Linear issue and session state for another
// platform's status command, and refuses a thread of no Linear session
// with thread.ErrNotFound, which the status command skips.
func TestDescribe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	app, err := surfacelinear.New(surfacelinear.Config{}, store, dbtest.Logger(t))
	require.NoError(t, err)
	att := dbtest.LinearAttachment()
	onLinear := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: att})
	elsewhere := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
	stored, err := store.LinearAttachment(ctx, onLinear.ID)
	require.NoError(t, err)

	for _, tt := range []struct {
		name    string
		id      uuid.UUID
		want    string
		wantErr error
	}{
		{"LinearSession", onLinear.ID, "Linear " + att.IssueIdentifier + " (session " + string(stored.SessionStatus) + ")", nil},
		{"NotOnLinear", elsewhere.ID, "", thread.ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := app.Describe(ctx, tt.id)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
