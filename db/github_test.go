package db_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestGitHubConversation: a thread attached to an issue, and another to a
// review thread of the same number, are found apart by their conversation
// key; a second thread on either is refused; the answer goes back there.
func TestGitHubConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	repo := rand.Int64N(1<<40) + 1
	issue := &thread.GitHubAttachment{InstallationID: 7, AccountID: 70, RepoID: repo, Owner: "acme", Repo: "api",
		Number: 12, PullRequest: true, CreatedBy: "alice"}
	review := *issue
	review.ReviewRoot = 99

	a, err := thread.NewBuilder(nil).WithGoal("issue").InteractiveGitHub(issue).
		WithInitialPrompt(thread.Stitch{Content: "hi", Source: thread.PlatformGitHub, ExternalID: "issue/1"}).Build(ctx, store)
	require.NoError(t, err)
	b, err := thread.NewBuilder(nil).WithGoal("review").InteractiveGitHub(&review).Build(ctx, store)
	require.NoError(t, err)

	got, err := store.ThreadByAttachment(ctx, issue)
	require.NoError(t, err)
	require.Equal(t, a.ID, got.ID)
	got, err = store.ThreadByAttachment(ctx, &review)
	require.NoError(t, err)
	require.Equal(t, b.ID, got.ID)

	_, err = thread.NewBuilder(nil).WithGoal("again").InteractiveGitHub(issue).Build(ctx, store)
	require.ErrorIs(t, err, thread.ErrGitHubThreadAttached)
	require.True(t, thread.IsAttached(err))

	p, target, err := store.InputSurface(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.PlatformGitHub, p)
	tg, err := thread.ParseGitHubTarget(target)
	require.NoError(t, err)
	require.Equal(t, thread.GitHubTarget{InstallationID: 7, Owner: "acme", Repo: "api", Number: 12}, tg)

	att, err := store.GitHubAttachment(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, int64(99), att.ReviewRoot)
	require.Equal(t, int64(70), att.AccountID)
	tenant, org, err := store.ThreadTenant(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.GitHubTenant(70), tenant)
	require.Equal(t, "github:70", org)
	list, err := store.ConsoleThreads(ctx, db.ConsoleFilter{Platform: thread.PlatformGitHub, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.True(t, list[0].OnGitHub)
	require.NoError(t, store.SetAttachmentActive(ctx, issue, false))
	p, _, err = store.InputSurface(ctx, a.ID)
	require.NoError(t, err)
	require.Empty(t, p, "a closed conversation is not answered")
	require.NoError(t, store.ActivateAttachment(ctx, a.ID, issue))
}

// TestGitHubInstallations: an uninstalled account's installations are gone,
// once; reinstalling brings them back; a suspended one is gone meanwhile.
func TestGitHubInstallations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	id, account := rand.Int64N(1<<40)+1, rand.Int64N(1<<40)+1
	in := db.GitHubInstallation{ID: id, AccountID: account, AccountLogin: "acme"}

	gone, err := store.GitHubInstallationGone(ctx, id)
	require.NoError(t, err)
	require.False(t, gone, "an installation never seen is not gone")
	require.NoError(t, store.UpsertGitHubInstallation(ctx, in))
	revoked, err := store.RevokeTenant(ctx, thread.GitHubTenant(account))
	require.NoError(t, err)
	require.True(t, revoked)
	revoked, err = store.RevokeTenant(ctx, thread.GitHubTenant(account))
	require.NoError(t, err)
	require.False(t, revoked)
	gone, err = store.GitHubInstallationGone(ctx, id)
	require.NoError(t, err)
	require.True(t, gone)

	require.NoError(t, store.UpsertGitHubInstallation(ctx, in))
	require.NoError(t, store.SetGitHubInstallationSuspended(ctx, id, true))
	gone, err = store.GitHubInstallationGone(ctx, id)
	require.NoError(t, err)
	require.True(t, gone)
}
