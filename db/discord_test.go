package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestSetDiscordLastMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
	// Snowflakes compare as numbers: a 19-digit id is newer than any 18-digit one.
	steps := []struct{ set, want string }{
		{"900000000000000000", "900000000000000000"},
		{"1000000000000000000", "1000000000000000000"},
		{"999999999999999999", "1000000000000000000"},
		{"1000000000000000001", "1000000000000000001"},
	}
	for _, s := range steps {
		require.NoError(t, store.SetDiscordLastMessage(ctx, att.DiscordThreadID, s.set))
		got, err := store.DiscordAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, s.want, got.LastMessageID, "after %s", s.set)
	}
	require.ErrorIs(t, store.SetDiscordLastMessage(ctx, att.DiscordThreadID, "nope"), thread.ErrInvalid)
}

func TestActiveDiscordThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	var ids []string
	for range 3 {
		att := dbtest.DiscordAttachment()
		dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
		ids = append(ids, att.DiscordThreadID)
	}
	require.NoError(t, store.SetDiscordActive(ctx, ids[1], false))

	page, err := store.ActiveDiscordThreads(ctx, "", 1)
	require.NoError(t, err)
	require.Len(t, page, 1)
	rest, err := store.ActiveDiscordThreads(ctx, page[0].DiscordThreadID, 10)
	require.NoError(t, err)
	var got []string
	for _, a := range append(page, rest...) {
		got = append(got, a.DiscordThreadID)
	}
	require.ElementsMatch(t, []string{ids[0], ids[2]}, got)
}

func TestDiscordSurface(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	att := dbtest.DiscordAttachment()
	th, err := thread.NewBuilder(nil).WithGoal("g").InteractiveDiscord(att).
		WithInitialPrompt(thread.Stitch{Content: "hi", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()}).Build(ctx, store)
	require.NoError(t, err)
	got, err := store.DiscordSurface(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, att.DiscordThreadID, got)

	// Input from Linear moves the surface away from Discord.
	require.NoError(t, store.AttachLinear(ctx, func() thread.LinearAttachment {
		l := *dbtest.LinearAttachment()
		l.ThreadID = th.ID
		return l
	}()))
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLinearActivity, Content: "x", Source: thread.PlatformLinear, ExternalID: "a1"})
	require.NoError(t, err)
	_, err = store.DiscordSurface(ctx, th.ID)
	require.ErrorIs(t, err, thread.ErrNotFound)

	// An autonomous thread has none.
	auto := dbtest.Thread(ctx, t, store, nil)
	_, err = store.DiscordSurface(ctx, auto.ID)
	require.ErrorIs(t, err, thread.ErrNotFound)
}

func TestThreadByLinearRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	meta := dbtest.LinearAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: meta})
	for _, ref := range []string{meta.SessionID, meta.IssueID, meta.IssueIdentifier, " " + strings.ToLower(meta.IssueIdentifier) + " "} {
		got, err := store.ThreadByLinearRef(ctx, ref, "linear:"+meta.WorkspaceID)
		require.NoError(t, err, ref)
		require.Equal(t, th.ID, got.ID, ref)
	}
	for _, ref := range []string{"", "ENG-0", "https://linear.app/x"} {
		_, err := store.ThreadByLinearRef(ctx, ref, "linear:"+meta.WorkspaceID)
		require.ErrorIs(t, err, thread.ErrNotFound, ref)
	}
	// Another organisation finds nothing, until it is linked with the
	// session's workspace.
	_, err := store.ThreadByLinearRef(ctx, meta.IssueIdentifier, "discord:100000000000000009")
	require.ErrorIs(t, err, thread.ErrNotFound)
	require.NoError(t, store.LinkTenants(ctx, "acme", thread.LinearTenant(meta.WorkspaceID), thread.DiscordTenant("100000000000000009")))
	got, err := store.ThreadByLinearRef(ctx, meta.IssueIdentifier, "acme")
	require.NoError(t, err)
	require.Equal(t, th.ID, got.ID)
	_, err = store.ThreadByLinearRef(ctx, meta.IssueIdentifier, "linear:"+meta.WorkspaceID)
	require.ErrorIs(t, err, thread.ErrNotFound, "a linked workspace is no longer an organisation of its own")
}
