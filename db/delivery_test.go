package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestRecordInbound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	in := thread.Inbound{Platform: thread.PlatformLinear, DeliveryID: "d1", EventKey: "session-1", EventType: "AgentSessionEvent", Action: "created"}

	tests := []struct {
		name string
		in   thread.Inbound
		new  bool
	}{
		{"First", in, true},
		{"SameDeliveryID", in, false},
		{"NewDeliveryIDSameEvent", thread.Inbound{Platform: in.Platform, DeliveryID: "d2", EventKey: in.EventKey, EventType: in.EventType}, false},
		{"OtherEvent", thread.Inbound{Platform: in.Platform, DeliveryID: "d3", EventKey: "session-2", EventType: in.EventType}, true},
		{"NoEventKey", thread.Inbound{Platform: in.Platform, DeliveryID: "d4", EventType: "PermissionChange", Outcome: thread.InboundIgnored}, true},
		{"SameIDOtherPlatform", thread.Inbound{Platform: thread.PlatformDiscord, DeliveryID: "d1", EventType: "MESSAGE_CREATE"}, true},
	}
	for _, tt := range tests {
		got, err := store.RecordInbound(ctx, tt.in)
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.new, got, tt.name)
	}

	t.Run("ConcurrentDuplicatesRecordOnce", func(t *testing.T) {
		var wg sync.WaitGroup
		results := make(chan bool, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var isNew bool
				err := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
					var err error
					isNew, err = tx.RecordInbound(ctx, thread.Inbound{Platform: thread.PlatformLinear, DeliveryID: uuid.NewString(), EventKey: "session-c", EventType: "AgentSessionEvent"})
					return err
				})
				require.NoError(t, err)
				results <- isNew
			}()
		}
		wg.Wait()
		close(results)
		var fresh int
		for r := range results {
			if r {
				fresh++
			}
		}
		require.Equal(t, 1, fresh)
	})
}

// TestUnstorablePayload checks that a delivery whose payload jsonb refuses,
// though Go's decoder took it, fails as thread.ErrUnstorable and nothing
// else: the Linear webhook then records the delivery without it.
func TestUnstorablePayload(t *testing.T) {
	t.Parallel()
	store := dbtest.NewStore(t)
	tests := []struct {
		name string
		body string
		want bool // jsonb takes it
	}{
		{"Plain", `{"a":"b"}`, true},
		{"Escapes", `{"a":"\"\\\/\b\f\n\r\t"}`, true},
		{"UnicodeEscape", `{"a":"caf\u00e9"}`, true},
		{"Pair", `{"a":"\ud83d\ude00"}`, true},
		{"PairUpper", `{"a":"\uD83D\uDE00"}`, true},
		{"RawEmoji", `{"a":"😀"}`, true},
		{"EscapedBackslashThenU0000", `{"a":"\\u0000"}`, true},
		{"NUL", `{"a":"\u0000"}`, false},
		{"LoneHigh", `{"a":"cut \ud83d"}`, false},
		{"LoneHighAtEnd", `{"a":"\ud83d`, false},
		{"HighThenText", `{"a":"\ud83dxxxxxx"}`, false},
		{"HighThenHigh", `{"a":"\ud83d\ud83d"}`, false},
		{"LoneLow", `{"a":"\ude00"}`, false},
		{"InvalidUTF8", "{\"a\":\"\xff\"}", false},
		{"HugeNumber", `{"a":1e1000000}`, false},
		{"TrailingBackslash", `\`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := store.RecordInbound(context.Background(), thread.Inbound{Platform: thread.PlatformLinear,
				DeliveryID: uuid.NewString(), EventType: "AgentSessionEvent", Payload: []byte(tt.body)})
			if tt.want {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, thread.ErrUnstorable)
		})
	}
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		store  *db.Store
		thread *thread.Thread
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		store := dbtest.NewStore(t)
		return &testBundle{store: store, thread: dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})}
	}
	insertTo := func(t *testing.T, b *testBundle, target string) *thread.Outbox {
		t.Helper()
		o, err := b.store.InsertOutbox(ctx, thread.Outbox{ThreadID: b.thread.ID, StitchID: b.thread.HeadStitchID, Platform: thread.PlatformLinear,
			Target: target, Kind: thread.OutboxThought, Body: []byte(`{"body":"On it."}`)})
		require.NoError(t, err)
		return o
	}
	insert := func(t *testing.T, b *testBundle) *thread.Outbox { return insertTo(t, b, "session-1") }
	// claim takes a row that must be claimable; a negative lease leaves
	// a claim that has lapsed already, as a sender that died does.
	claim := func(t *testing.T, b *testBundle, id uuid.UUID, lease time.Duration) *thread.Outbox {
		t.Helper()
		o, err := b.store.ClaimOutbox(ctx, id, lease)
		require.NoError(t, err)
		return o
	}

	t.Run("ClaimThenSent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := insert(t, b)
		require.Equal(t, thread.OutboxPending, o.Status)

		claimed, err := b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.NoError(t, err)
		require.Equal(t, thread.OutboxSending, claimed.Status)
		require.Equal(t, 1, claimed.Attempts)

		_, err = b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "a live claim excludes others")

		next, err := b.store.MarkOutboxSent(ctx, o.ID, "activity-1")
		require.NoError(t, err)
		require.Equal(t, uuid.Nil, next, "nothing waits behind it")
		sent, err := b.store.Outbox(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, thread.OutboxSent, sent.Status)
		require.Equal(t, "activity-1", sent.ExternalID)
		require.False(t, sent.SentAt.IsZero())

		_, err = b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "sent is final")
	})

	t.Run("WrittenClaimedForExpress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got, err := b.store.Write(ctx, db.Write{ThreadID: b.thread.ID, SendingFor: 200 * time.Millisecond,
			Outbox: []thread.Outbox{{Platform: thread.PlatformLinear, Target: "session-1", Kind: thread.OutboxThought, Body: []byte(`{}`)}}})
		require.NoError(t, err)
		o := got.Outbox[0]
		require.Equal(t, thread.OutboxSending, o.Status)
		require.Equal(t, 1, o.Attempts, "the express send is the first attempt")
		_, err = b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "other senders leave it to express")
		require.Eventually(t, func() bool {
			_, err := b.store.ClaimOutbox(ctx, o.ID, time.Minute)
			return err == nil
		}, 5*time.Second, 20*time.Millisecond, "another sender takes it once the claim lapses")
		cur, err := b.store.Outbox(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, 2, cur.Attempts)
	})

	t.Run("LapsedClaimIsReclaimed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := insert(t, b)
		_, err := b.store.ClaimOutbox(ctx, o.ID, -time.Second) // a sender that died
		require.NoError(t, err)
		again, err := b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.NoError(t, err)
		require.Equal(t, 2, again.Attempts)
	})

	t.Run("RetryWaitsUntilDue", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := insert(t, b)
		claimed := claim(t, b, o.ID, time.Minute)
		require.NoError(t, b.store.RetryOutbox(ctx, claimed, "503", 300*time.Millisecond))
		_, err := b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "not due yet")

		var due *thread.Outbox
		require.Eventually(t, func() bool {
			due, err = b.store.ClaimOutbox(ctx, o.ID, time.Minute)
			return err == nil
		}, 5*time.Second, 20*time.Millisecond, "due after the delay")
		require.Equal(t, "503", due.LastError)

		require.ErrorIs(t, b.store.FailOutbox(ctx, claimed, "stale claim"), thread.ErrDeliveryNotClaimable,
			"an earlier claim cannot finish the row")
		require.NoError(t, b.store.FailOutbox(ctx, due, "gave up"))
		failed, err := b.store.Outbox(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, thread.OutboxFailed, failed.Status)
	})

	t.Run("InOrderPerSurface", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first, second := insert(t, b), insert(t, b)
		other := insertTo(t, b, "session-2")
		_, err := b.store.ClaimOutbox(ctx, second.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "the second post waits for the first")
		_, err = b.store.ClaimOutbox(ctx, other.ID, time.Minute)
		require.NoError(t, err, "another surface does not wait")

		_, err = b.store.ClaimOutbox(ctx, first.ID, time.Minute)
		require.NoError(t, err)
		next, err := b.store.NextInLine(ctx, first)
		require.NoError(t, err)
		require.Equal(t, second.ID, next)
		next, err = b.store.MarkOutboxSent(ctx, first.ID, "a1")
		require.NoError(t, err)
		require.Equal(t, second.ID, next, "sending the first names the second")
		_, err = b.store.ClaimOutbox(ctx, second.ID, time.Minute)
		require.NoError(t, err)
		_, err = b.store.NextInLine(ctx, second)
		require.ErrorIs(t, err, thread.ErrNotFound)
		next, err = b.store.MarkOutboxSent(ctx, second.ID, "a2")
		require.NoError(t, err)
		require.Equal(t, uuid.Nil, next, "another surface's row is not next")
	})

	t.Run("FinishingTakesTheClaimItWasGiven", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := insert(t, b)
		// An express send outlives its claim: the reclaim hands the row
		// to a job, which claims it and sends.
		express := claim(t, b, o.ID, -time.Second)
		reclaimed, err := b.store.ReclaimLapsedOutbox(ctx, 10)
		require.NoError(t, err)
		require.Len(t, reclaimed, 1)
		job := claim(t, b, o.ID, time.Minute)

		require.ErrorIs(t, b.store.RetryOutbox(ctx, express, "late failure", 0), thread.ErrDeliveryNotClaimable,
			"the late failure does not take the job's claim")
		_, err = b.store.ClaimOutbox(ctx, o.ID, time.Minute)
		require.ErrorIs(t, err, thread.ErrDeliveryNotClaimable, "the job still holds it")

		_, err = b.store.MarkOutboxSent(ctx, o.ID, "activity-1")
		require.NoError(t, err)
		require.ErrorIs(t, b.store.RetryOutbox(ctx, job, "late failure", 0), thread.ErrDeliveryNotClaimable,
			"a failure does not undo a send")
		sent, err := b.store.Outbox(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, thread.OutboxSent, sent.Status)
	})

	t.Run("ReclaimTakesOnlyLapsedClaims", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		lapsed, live, pending, sent := insertTo(t, b, "s-1"), insertTo(t, b, "s-2"), insertTo(t, b, "s-3"), insertTo(t, b, "s-4")
		claim(t, b, lapsed.ID, -time.Second)
		claim(t, b, live.ID, time.Minute)
		claim(t, b, sent.ID, -time.Second)
		_, err := b.store.MarkOutboxSent(ctx, sent.ID, "activity-4")
		require.NoError(t, err)

		got, err := b.store.ReclaimLapsedOutbox(ctx, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, lapsed.ID, got[0].ID)
		require.Equal(t, thread.OutboxPending, got[0].Status)
		require.NotEqual(t, pending.ID, got[0].ID)
		again, err := b.store.ReclaimLapsedOutbox(ctx, 10)
		require.NoError(t, err)
		require.Empty(t, again, "a reclaimed row is its job's now")
		require.Equal(t, 2, claim(t, b, lapsed.ID, time.Minute).Attempts, "due at once")
	})

	t.Run("StrandedAreOnlyLongDuePendingRows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		longDue, sending, sent := insertTo(t, b, "s-1"), insertTo(t, b, "s-3"), insertTo(t, b, "s-4")
		insertTo(t, b, "s-2") // pending, due only now
		// Released for a retry due two minutes ago: its job is long lost.
		require.NoError(t, b.store.RetryOutbox(ctx, claim(t, b, longDue.ID, time.Minute), "timeout", -2*time.Minute))
		claim(t, b, sending.ID, -2*time.Minute) // lapsed, but the reclaim's
		claim(t, b, sent.ID, time.Minute)
		_, err := b.store.MarkOutboxSent(ctx, sent.ID, "activity-4")
		require.NoError(t, err)

		got, err := b.store.StrandedOutbox(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, longDue.ID, got[0].ID)

		// A row long due but waiting in line behind longDue is not
		// stranded: longDue's end wakes it. (Each sweep gave it another
		// job, each with its own attempts.)
		behind := insertTo(t, b, "s-1")
		_, err = b.store.Pool().Exec(ctx, `UPDATE platform_deliveries SET next_attempt_at = now() - interval '2 minutes' WHERE delivery_id = $1`, behind.ID)
		require.NoError(t, err)
		got, err = b.store.StrandedOutbox(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, longDue.ID, got[0].ID)
	})

	t.Run("ConcurrentReclaimsTakeEachOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 20 {
			claim(t, b, insertTo(t, b, fmt.Sprintf("session-%d", i)).ID, -time.Second)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		seen := map[uuid.UUID]int{}
		for range 4 {
			wg.Go(func() {
				for {
					// Each in a transaction held open a moment, as the
					// reclaim job holds it while it enqueues.
					var got []thread.Outbox
					err := b.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) (err error) {
						got, err = tx.ReclaimLapsedOutbox(ctx, 3)
						time.Sleep(5 * time.Millisecond)
						return err
					})
					require.NoError(t, err)
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, o := range got {
						seen[o.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, 20)
		for id, n := range seen {
			require.Equal(t, 1, n, id)
		}
	})

	t.Run("UnknownIDs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.store.ClaimOutbox(ctx, uuid.New(), time.Minute)
		require.ErrorIs(t, err, thread.ErrNotFound)
		_, err = b.store.MarkOutboxSent(ctx, uuid.New(), "x")
		require.ErrorIs(t, err, thread.ErrNotFound)
		_, err = b.store.InsertOutbox(ctx, thread.Outbox{ThreadID: uuid.New(), Platform: thread.PlatformLinear, Target: "s", Kind: thread.OutboxThought, Body: []byte(`{}`)})
		require.ErrorIs(t, err, thread.ErrNotFound)
	})
}

func TestMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	scope := thread.MemoryScope{Tenant: thread.LinearTenant("org-1"), Agent: "weft"}
	require.NoError(t, store.SaveMemory(ctx, scope, "prefs", "v1"))
	require.NoError(t, store.SaveMemory(ctx, scope, "prefs", "v2"))
	require.NoError(t, store.SaveMemory(ctx, thread.MemoryScope{Tenant: scope.Tenant, Agent: "other"}, "prefs", "x"))
	blocks, err := store.MemoryBlocks(ctx, scope)
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	require.Equal(t, "v2", blocks[0].Content)
	require.ErrorIs(t, store.SaveMemory(ctx, scope, "Bad Label!", "x"), thread.ErrInvalid)
}

// TestMemoryBoundary: a block saved in one organisation never reads back in
// another, from either side, until an operator links the two; a person's
// block reads back only for that person.
func TestMemoryBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	a := thread.MemoryScope{Tenant: thread.LinearTenant("org-a"), Agent: "weft"}
	b := thread.MemoryScope{Tenant: thread.DiscordTenant("100000000000000002"), Agent: "weft"}
	operator := thread.MemoryScope{Agent: "weft"}
	require.NoError(t, store.SaveMemory(ctx, a, "secret", "org A ships on Fridays"))
	require.NoError(t, store.SaveMemory(ctx, b, "secret", "org B ships on Mondays"))
	alice := a
	alice.Person = "linear:alice"
	require.NoError(t, store.SaveMemory(ctx, alice, "style", "alice likes bullet points"))

	read := func(s thread.MemoryScope) []string {
		t.Helper()
		blocks, err := store.MemoryBlocks(ctx, s)
		require.NoError(t, err)
		var out []string
		for _, blk := range blocks {
			out = append(out, blk.Content)
		}
		return out
	}
	bob := a
	bob.Person = "linear:bob"
	for _, tt := range []struct {
		name  string
		scope thread.MemoryScope
		want  []string
	}{
		{"OrgAReadsOnlyItsOwn", a, []string{"org A ships on Fridays"}},
		{"OrgBReadsOnlyItsOwn", b, []string{"org B ships on Mondays"}},
		{"PersonReadsOrgAndOwn", alice, []string{"org A ships on Fridays", "alice likes bullet points"}},
		{"OtherPersonDoesNotReadAlices", bob, []string{"org A ships on Fridays"}},
		{"OperatorReadsNoTenants", operator, nil},
		{"AlicesIdInOrgBReadsOnlyB", thread.MemoryScope{Tenant: b.Tenant, Agent: "weft", Person: "linear:alice"}, []string{"org B ships on Mondays"}},
	} {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, read(tt.scope)) })
	}

	// Linked, the two tenants are one organisation with one memory: the
	// blocks saved apart stay behind under their old organisations.
	require.NoError(t, store.LinkTenants(ctx, "acme", a.Tenant, b.Tenant))
	require.Empty(t, read(a))
	require.NoError(t, store.SaveMemory(ctx, b, "shared", "acme ships daily"))
	require.Equal(t, []string{"acme ships daily"}, read(a))
}
