package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestAppendStitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		store  *db.Store
		thread *thread.Thread
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		store := dbtest.NewStore(t)
		return &testBundle{store: store, thread: dbtest.Thread(ctx, t, store, nil)}
	}

	t.Run("ChainsAfterHead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s, err := b.store.AppendStitch(ctx, thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchAgentThought, Content: "hmm"})
		require.NoError(t, err)
		require.Equal(t, int64(3), s.Seq)
		require.Equal(t, b.thread.HeadStitchID, s.PreviousID)
		require.Equal(t, "hmm", s.Content)

		th, err := b.store.Thread(ctx, b.thread.ID)
		require.NoError(t, err)
		require.Equal(t, s.ID, th.HeadStitchID)
		require.Equal(t, int64(3), th.StitchCount)
	})

	// An append is a HOT update of the thread's row only while it leaves
	// the indexed updated_at alone (bench store's 16-connection ratio).
	t.Run("MovesActivityNotUpdatedAt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.store.AppendStitch(ctx, thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchAgentThought, Content: "hmm"})
		require.NoError(t, err)
		th, err := b.store.Thread(ctx, b.thread.ID)
		require.NoError(t, err)
		require.True(t, th.UpdatedAt.Equal(b.thread.UpdatedAt), "updated_at moved: %s → %s", b.thread.UpdatedAt, th.UpdatedAt)
		require.True(t, th.LastActivityAt.After(b.thread.LastActivityAt), "last_activity_at stayed at %s", th.LastActivityAt)
	})

	t.Run("ConcurrentAppendsNeverFork", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const workers, each = 16, 25
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					_, err := b.store.AppendStitch(ctx, thread.Stitch{
						ThreadID: b.thread.ID, Type: thread.StitchDiscordMessage, Content: fmt.Sprintf("%d/%d", w, i),
						Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(),
					})
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		requireChain(t, b.store, b.thread.ID, 2+workers*each)
	})

	t.Run("DuplicateExternalIDIsTyped", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		msg := thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchDiscordMessage, Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()}
		_, err := b.store.AppendStitch(ctx, msg)
		require.NoError(t, err)
		_, err = b.store.AppendStitch(ctx, msg)
		require.ErrorIs(t, err, thread.ErrDuplicateExternalID)
		require.ErrorIs(t, err, thread.ErrDuplicate)
		requireChain(t, b.store, b.thread.ID, 3)
	})

	t.Run("ConcurrentDuplicatesStoreOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		msg := thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchDiscordMessage, Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()}
		var wg sync.WaitGroup
		results := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() { defer wg.Done(); _, err := b.store.AppendStitch(ctx, msg); results <- err }()
		}
		wg.Wait()
		close(results)
		var ok int
		for err := range results {
			if err == nil {
				ok++
				continue
			}
			require.ErrorIs(t, err, thread.ErrDuplicateExternalID)
		}
		require.Equal(t, 1, ok)
		requireChain(t, b.store, b.thread.ID, 3)
	})

	t.Run("UnknownThread", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.store.AppendStitch(ctx, thread.Stitch{ThreadID: uuid.New(), Type: thread.StitchLLMCall})
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	t.Run("InvalidStitch", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.store.AppendStitch(ctx, thread.Stitch{ThreadID: b.thread.ID, Type: "teams_message"})
		require.ErrorIs(t, err, thread.ErrInvalid)
		_, err = b.store.AppendStitch(ctx, thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchDiscordMessage, Source: thread.PlatformDiscord, ExternalID: "42"})
		require.ErrorIs(t, err, thread.ErrInvalidSnowflake)
	})

	t.Run("InsideTxRollsBackWithIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		err := b.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
			_, err := tx.AppendStitch(ctx, thread.Stitch{ThreadID: b.thread.ID, Type: thread.StitchLLMCall})
			require.NoError(t, err)
			return fmt.Errorf("abandon")
		})
		require.EqualError(t, err, "abandon")
		requireChain(t, b.store, b.thread.ID, 2)
	})

	t.Run("RecordsLLMCallFields", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		in := thread.Stitch{
			ThreadID: b.thread.ID, Type: thread.StitchLLMCall, Model: "gpt-test", InputTokens: 12, OutputTokens: 7,
			LLMRequest: []byte(`{"messages":[]}`), LLMResponse: []byte(`{"content":"hi"}`), Latency: 1500 * 1e6,
			Author: &thread.Author{ID: "u1", Name: "Alice"},
		}
		s, err := b.store.AppendStitch(ctx, in)
		require.NoError(t, err)
		got, err := b.store.Stitch(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, "gpt-test", got.Model)
		require.Equal(t, 12, got.InputTokens)
		require.Equal(t, 7, got.OutputTokens)
		require.Equal(t, in.Latency, got.Latency)
		require.JSONEq(t, `{"content":"hi"}`, string(got.LLMResponse))
		require.Equal(t, &thread.Author{ID: "u1", Name: "Alice"}, got.Author)
	})
}

// requireChain checks a thread's stitches form one unforked chain of n,
// numbered 1..n, and that the thread's head and count agree.
func requireChain(t *testing.T, store *db.Store, threadID uuid.UUID, n int) {
	t.Helper()
	ctx := context.Background()
	all, err := store.Stitches(ctx, threadID, db.StitchPage{})
	require.NoError(t, err)
	require.Len(t, all, n)
	for i, s := range all {
		require.Equal(t, int64(i+1), s.Seq)
		if i == 0 {
			require.Equal(t, uuid.Nil, s.PreviousID)
		} else {
			require.Equal(t, all[i-1].ID, s.PreviousID, "stitch %d", s.Seq)
		}
	}
	th, err := store.Thread(ctx, threadID)
	require.NoError(t, err)
	require.Equal(t, int64(n), th.StitchCount)
	require.Equal(t, all[n-1].ID, th.HeadStitchID)
}

func TestStitchesPagination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	for i := range 23 {
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchAgentThought, Content: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	const total = 25

	seqs := func(ss []thread.Stitch) []int64 {
		var out []int64
		for _, s := range ss {
			out = append(out, s.Seq)
		}
		return out
	}

	t.Run("ForwardVisitsEachOnce", func(t *testing.T) {
		var seen []int64
		var after int64
		for {
			page, err := store.Stitches(ctx, th.ID, db.StitchPage{After: after, Limit: 7})
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			seen = append(seen, seqs(page)...)
			after = page[len(page)-1].Seq
		}
		require.Len(t, seen, total)
		for i, s := range seen {
			require.Equal(t, int64(i+1), s)
		}
	})

	t.Run("BackwardVisitsEachOnce", func(t *testing.T) {
		var seen []int64
		var before int64
		for {
			page, err := store.Stitches(ctx, th.ID, db.StitchPage{Before: before, Limit: 7, Newest: true})
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			require.IsIncreasing(t, seqs(page), "pages read backwards are still in chain order")
			seen = append(seqs(page), seen...)
			before = page[0].Seq
		}
		require.Len(t, seen, total)
		for i, s := range seen {
			require.Equal(t, int64(i+1), s)
		}
	})

	t.Run("LastN", func(t *testing.T) {
		page, err := store.Stitches(ctx, th.ID, db.StitchPage{Limit: 5, Newest: true})
		require.NoError(t, err)
		require.Equal(t, []int64{21, 22, 23, 24, 25}, seqs(page))
	})

	t.Run("Window", func(t *testing.T) {
		page, err := store.Stitches(ctx, th.ID, db.StitchPage{After: 3, Before: 7})
		require.NoError(t, err)
		require.Equal(t, []int64{4, 5, 6}, seqs(page))
	})
}

func TestEditStitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	id := dbtest.Snowflake()
	_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: "v1", Source: thread.PlatformDiscord, ExternalID: id})
	require.NoError(t, err)

	_, err = store.EditStitch(ctx, thread.PlatformDiscord, id, db.StitchEdit{Content: "v1", EditedAt: th.CreatedAt})
	require.ErrorIs(t, err, thread.ErrNotFound, "the same text is no edit")
	same, err := store.StitchByExternalID(ctx, thread.PlatformDiscord, id)
	require.NoError(t, err)
	require.True(t, same.EditedAt.IsZero(), "not shown as edited")

	edited, err := store.EditStitch(ctx, thread.PlatformDiscord, id, db.StitchEdit{Content: "v2", EditedAt: th.CreatedAt})
	require.NoError(t, err)
	require.Equal(t, "v2", edited.Content)
	require.False(t, edited.EditedAt.IsZero())
	require.True(t, edited.DeletedAt.IsZero())

	deleted, err := store.EditStitch(ctx, thread.PlatformDiscord, id, db.StitchEdit{DeletedAt: th.CreatedAt})
	require.NoError(t, err)
	require.Equal(t, "v2", deleted.Content, "a delete keeps the last text for the record")
	require.False(t, deleted.DeletedAt.IsZero())
	requireChain(t, store, th.ID, 3)

	_, err = store.EditStitch(ctx, thread.PlatformDiscord, dbtest.Snowflake(), db.StitchEdit{Content: "x", EditedAt: th.CreatedAt})
	require.ErrorIs(t, err, thread.ErrNotFound)
}
