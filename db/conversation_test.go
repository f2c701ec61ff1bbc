package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestThreadByAttachment finds each platform's thread by its attachment,
// and reports ErrNotFound for a conversation weft does not track.
func TestThreadByAttachment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	lin, dis := dbtest.LinearAttachment(), dbtest.DiscordAttachment()
	sl := &thread.SlackAttachment{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", ChannelType: "channel", CreatedBy: "U1"}
	tests := []struct {
		name string
		att  thread.Attachment
		opts *dbtest.ThreadOpts
	}{
		{"Linear", lin, &dbtest.ThreadOpts{Linear: lin}},
		{"Discord", dis, &dbtest.ThreadOpts{Discord: dis}},
		{"Slack", sl, &dbtest.ThreadOpts{Slack: sl}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := dbtest.Thread(ctx, t, store, tt.opts)
			got, err := store.ThreadByAttachment(ctx, tt.att)
			require.NoError(t, err)
			require.Equal(t, th.ID, got.ID)
		})
	}
	_, err := store.ThreadByAttachment(ctx, &thread.DiscordAttachment{DiscordThreadID: dbtest.Snowflake()})
	require.ErrorIs(t, err, thread.ErrNotFound)
	_, err = store.ThreadByAttachment(ctx, nil)
	require.ErrorIs(t, err, thread.ErrInvalid)
}

// TestActivateAttachment: new input makes a Linear session active and an
// archived Discord thread active again.
func TestActivateAttachment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)

	lin := dbtest.LinearAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: lin})
	require.NoError(t, store.SetLinearSessionStatus(ctx, lin.SessionID, thread.SessionComplete))
	require.NoError(t, store.ActivateAttachment(ctx, th.ID, &thread.LinearAttachment{SessionID: lin.SessionID}))
	got, err := store.LinearAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionActive, got.SessionStatus)

	dis := dbtest.DiscordAttachment()
	th = dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: dis})
	require.NoError(t, store.SetAttachmentActive(ctx, &thread.DiscordAttachment{DiscordThreadID: dis.DiscordThreadID}, false))
	require.NoError(t, store.ActivateAttachment(ctx, th.ID, &thread.DiscordAttachment{DiscordThreadID: dis.DiscordThreadID}))
	d, err := store.DiscordAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.True(t, d.Active)

	require.ErrorIs(t, store.SetAttachmentActive(ctx, lin, false), thread.ErrInvalid, "a Linear session is not archived")
	require.ErrorIs(t, store.SetSeenThrough(ctx, lin, "1"), thread.ErrInvalid, "nor backfilled")
}

// TestRevokeTenant deactivates a Linear installation once; other
// platforms' installations are not revoked here.
func TestRevokeTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	revoked, err := store.RevokeTenant(ctx, thread.LinearTenant("org-unknown"))
	require.NoError(t, err)
	require.False(t, revoked, "no installation to revoke")
	_, err = store.RevokeTenant(ctx, thread.SlackTenant("T1"))
	require.ErrorIs(t, err, thread.ErrInvalid)
}
