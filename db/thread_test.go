package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func countRows(t *testing.T, store *db.Store, table string) int {
	t.Helper()
	var n int
	require.NoError(t, store.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestThreadBuilder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("InteractiveLinearWritesEverything", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		require.NoError(t, store.SaveMemory(ctx, thread.MemoryScope{Tenant: thread.LinearTenant(meta.WorkspaceID), Agent: "weft"},
			"team", "The team ships on Fridays."))
		require.NoError(t, store.SaveMemory(ctx, thread.MemoryScope{Tenant: thread.LinearTenant(meta.WorkspaceID), Agent: "weft", Person: "linear:" + meta.CreatedByUserID},
			"style", "Prefers short answers."))
		require.NoError(t, store.SaveMemory(ctx, thread.MemoryScope{Tenant: thread.LinearTenant("another-workspace"), Agent: "weft"},
			"team", "Another workspace's secret."))
		th, err := thread.NewBuilder(&thread.MemoryManager{Memory: store}).
			WithGoal("Fix the flaky test").
			InteractiveLinear(meta).
			WithInitialPrompt(thread.Stitch{Content: "please look", Source: thread.PlatformLinear, ExternalID: "comment-1"}).
			Build(ctx, store)
		require.NoError(t, err)
		require.Equal(t, thread.TypeInteractive, th.Type)
		require.Equal(t, thread.StatusPending, th.Status)

		got, err := store.ThreadByLinearSession(ctx, meta.SessionID)
		require.NoError(t, err)
		require.Equal(t, th.ID, got.ID)
		att, err := store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionPending, att.SessionStatus)
		require.Equal(t, meta.IssueIdentifier, att.IssueIdentifier)

		ss, err := store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		require.Len(t, ss, 2)
		require.Equal(t, thread.StitchSystemPrompt, ss[0].Type)
		require.Contains(t, ss[0].Content, "The team ships on Fridays.")
		require.Contains(t, ss[0].Content, "Prefers short answers.")
		require.NotContains(t, ss[0].Content, "Another workspace's secret.")
		require.Contains(t, ss[0].Content, meta.IssueIdentifier)
		require.Equal(t, thread.StitchInitialPrompt, ss[1].Type)
		require.Equal(t, "please look", ss[1].Content)
		require.Equal(t, "comment-1", ss[1].ExternalID)
	})

	t.Run("InteractiveDiscordFoundByDiscordThread", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.DiscordAttachment()
		th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: meta})
		got, err := store.ThreadByDiscordThread(ctx, meta.DiscordThreadID)
		require.NoError(t, err)
		require.Equal(t, th.ID, got.ID)
		_, err = store.ThreadByDiscordThread(ctx, dbtest.Snowflake())
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	errCases := []struct {
		name    string
		builder func(*thread.Builder) *thread.Builder
		want    error
	}{
		{"EmptyGoal", func(b *thread.Builder) *thread.Builder { return b.WithGoal("  ").Autonomous() }, thread.ErrEmptyGoal},
		{"InteractiveWithoutPlatform", func(b *thread.Builder) *thread.Builder { return b.WithGoal("g").InteractiveDiscord(nil) }, thread.ErrNoPlatform},
		{"LinearWithoutSession", func(b *thread.Builder) *thread.Builder {
			return b.WithGoal("g").InteractiveLinear(&thread.LinearAttachment{WorkspaceID: "w", CreatedByUserID: "u"})
		}, thread.ErrInvalidSessionMetadata},
		{"BadSnowflake", func(b *thread.Builder) *thread.Builder {
			d := dbtest.DiscordAttachment()
			d.GuildID = "guild"
			return b.WithGoal("g").InteractiveDiscord(d)
		}, thread.ErrInvalidSnowflake},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := dbtest.NewStore(t)
			_, err := tc.builder(thread.NewBuilder(nil)).Build(ctx, store)
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, thread.ErrInvalid)
			require.Zero(t, countRows(t, store, "threads"))
		})
	}

	t.Run("ZeroBuilderIsAutonomous", func(t *testing.T) {
		t.Parallel()
		d, err := (&thread.Builder{}).WithGoal("g").Draft(ctx)
		require.NoError(t, err)
		require.Equal(t, thread.TypeAutonomous, d.Thread.Type)
		require.Equal(t, thread.DefaultAgent, d.Thread.AgentName)
	})

	t.Run("RollbackWhenSessionAttachedElsewhere", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		first := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: meta})
		_, err := thread.NewBuilder(nil).WithGoal("again").InteractiveLinear(meta).Build(ctx, store)
		require.ErrorIs(t, err, thread.ErrLinearSessionAttached)
		require.ErrorIs(t, err, thread.ErrConflict)
		require.Equal(t, 1, countRows(t, store, "threads"), "the failed thread left nothing behind")
		require.Equal(t, 2, countRows(t, store, "stitches"))
		got, err := store.ThreadByLinearSession(ctx, meta.SessionID)
		require.NoError(t, err)
		require.Equal(t, first.ID, got.ID)
	})

	t.Run("RollbackWhenDiscordThreadAttachedElsewhere", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.DiscordAttachment()
		dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: meta})
		_, err := thread.NewBuilder(nil).WithGoal("again").InteractiveDiscord(meta).Build(ctx, store)
		require.ErrorIs(t, err, thread.ErrDiscordThreadAttached)
		require.Equal(t, 1, countRows(t, store, "threads"))
		require.Equal(t, 1, countRows(t, store, "discord_thread_metadata"))
	})

	t.Run("RollbackWhenInitialPromptIsADuplicate", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		msgID := dbtest.Snowflake()
		build := func() error {
			_, err := thread.NewBuilder(nil).WithGoal("g").InteractiveDiscord(dbtest.DiscordAttachment()).
				WithInitialPrompt(thread.Stitch{Content: "hi", Source: thread.PlatformDiscord, ExternalID: msgID}).Build(ctx, store)
			return err
		}
		require.NoError(t, build())
		require.ErrorIs(t, build(), thread.ErrDuplicateExternalID)
		require.Equal(t, 1, countRows(t, store, "threads"))
		require.Equal(t, 1, countRows(t, store, "discord_thread_metadata"))
	})

	t.Run("RollbackWhenMemoryFails", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		boom := errors.New("memory unavailable")
		_, err := thread.NewBuilder(&thread.MemoryManager{Memory: failingMemory{boom}}).WithGoal("g").Build(ctx, store)
		require.ErrorIs(t, err, boom)
		require.Zero(t, countRows(t, store, "threads"))
	})

	t.Run("BuildInsideCallerTx", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		err := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
			_, err := thread.NewBuilder(nil).WithGoal("g").Build(ctx, tx)
			require.NoError(t, err)
			return errors.New("the caller's later step failed")
		})
		require.Error(t, err)
		require.Zero(t, countRows(t, store, "threads"))
	})
}

type failingMemory struct{ err error }

func (f failingMemory) PromptMemory(context.Context, thread.MemoryScope) (string, []thread.MemoryBlock, error) {
	return "", nil, f.err
}

func TestAttach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	linear := dbtest.LinearAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: linear})

	// Continue the Linear session in Discord: the same thread, both attachments.
	d := dbtest.DiscordAttachment()
	d.ThreadID = th.ID
	require.NoError(t, store.AttachDiscord(ctx, *d))
	got, err := store.ThreadByDiscordThread(ctx, d.DiscordThreadID)
	require.NoError(t, err)
	require.Equal(t, th.ID, got.ID)

	second := dbtest.DiscordAttachment()
	second.ThreadID = th.ID
	require.ErrorIs(t, store.AttachDiscord(ctx, *second), thread.ErrAlreadyAttached)

	other := dbtest.Thread(ctx, t, store, nil)
	taken := *d
	taken.ThreadID = other.ID
	require.ErrorIs(t, store.AttachDiscord(ctx, taken), thread.ErrDiscordThreadAttached)

	l := *linear
	l.ThreadID = other.ID
	require.ErrorIs(t, store.AttachLinear(ctx, l), thread.ErrLinearSessionAttached)

	missing := dbtest.DiscordAttachment()
	missing.ThreadID = uuid.New()
	require.ErrorIs(t, store.AttachDiscord(ctx, *missing), thread.ErrNotFound)

	require.NoError(t, store.SetDiscordActive(ctx, d.DiscordThreadID, false))
	att, err := store.DiscordAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.False(t, att.Active)
	require.NoError(t, store.SetLinearSessionStatus(ctx, linear.SessionID, thread.SessionStale))
	la, err := store.LinearAttachment(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionStale, la.SessionStatus)
}

func TestSetStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	result := json.RawMessage(`{"summary":"done"}`)

	steps := []struct {
		change thread.StatusChange
		ok     bool
	}{
		{thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}, false}, // pending → waiting
		{thread.StatusChange{To: thread.StatusRunning}, true},
		{thread.StatusChange{To: thread.StatusRunning}, false},
		{thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingClarification}, true},
		{thread.StatusChange{To: thread.StatusFailed, Error: "x"}, true}, // its answer could not be posted
		{thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}, false},
		{thread.StatusChange{To: thread.StatusRunning}, true},
		{thread.StatusChange{To: thread.StatusCompleted, Result: result}, true},
		{thread.StatusChange{To: thread.StatusAborted}, false},
		{thread.StatusChange{To: thread.StatusRunning}, true}, // new input reopens
		{thread.StatusChange{To: thread.StatusFailed, Error: "llm down"}, true},
	}
	th := dbtest.Thread(ctx, t, store, nil)
	for i, st := range steps {
		got, err := store.SetStatus(ctx, th.ID, st.change)
		if !st.ok {
			var te *thread.TransitionError
			require.ErrorAs(t, err, &te, "step %d", i)
			require.ErrorIs(t, err, thread.ErrConflict)
			continue
		}
		require.NoError(t, err, "step %d", i)
		require.Equal(t, st.change.To, got.Status)
		require.Equal(t, st.change.WaitingReason, got.WaitingReason)
		if st.change.To == thread.StatusCompleted {
			require.JSONEq(t, string(result), string(got.Result))
		} else {
			require.Nil(t, got.Result, "a result exists only while completed")
		}
	}

	_, err := store.SetStatus(ctx, th.ID, thread.StatusChange{To: thread.StatusCompleted})
	require.ErrorIs(t, err, thread.ErrInvalid, "completed needs a result")
	_, err = store.SetStatus(ctx, uuid.New(), thread.StatusChange{To: thread.StatusRunning})
	require.ErrorIs(t, err, thread.ErrNotFound)
}

func TestListThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, dbtest.Thread(ctx, t, store, nil).ID)
	}
	dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
	dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	_, err := store.SetStatus(ctx, ids[0], thread.StatusChange{To: thread.StatusRunning})
	require.NoError(t, err)

	all, err := store.ListThreads(ctx, db.ThreadFilter{})
	require.NoError(t, err)
	require.Len(t, all, 7)
	require.Equal(t, ids[0], all[0].ID, "newest updated first")

	running, err := store.ListThreads(ctx, db.ThreadFilter{Status: thread.StatusRunning})
	require.NoError(t, err)
	require.Len(t, running, 1)

	discord, err := store.ListThreads(ctx, db.ThreadFilter{Platform: thread.PlatformDiscord})
	require.NoError(t, err)
	require.Len(t, discord, 1)

	var seen int
	f := db.ThreadFilter{Limit: 3}
	for {
		page, err := store.ListThreads(ctx, f)
		require.NoError(t, err)
		seen += len(page)
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		f.AfterUpdated, f.AfterID = last.UpdatedAt, last.ID
	}
	require.Equal(t, 7, seen)
}

func TestMarkStaleLinearSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	idle := dbtest.LinearAttachment()
	busy := dbtest.LinearAttachment()
	idleThread := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: idle})
	busyThread := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: busy})
	_, err := store.Pool().Exec(ctx, `UPDATE linear_thread_metadata SET last_activity_at = now() - interval '31 minutes' WHERE session_id = $1`, idle.SessionID)
	require.NoError(t, err)
	n, err := store.MarkStaleLinearSessions(ctx, 30*time.Minute)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err := store.LinearAttachment(ctx, idleThread.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionStale, got.SessionStatus)
	got, err = store.LinearAttachment(ctx, busyThread.ID)
	require.NoError(t, err)
	require.Equal(t, thread.SessionPending, got.SessionStatus)
}
