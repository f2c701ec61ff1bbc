package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// linearDraft drafts a Linear interactive thread whose initial prompt came
// from Linear, with a session status other than the default so that a write
// dropping it shows.
func linearDraft(t *testing.T, meta *thread.LinearAttachment) *thread.Draft {
	t.Helper()
	meta.SessionStatus = thread.SessionActive
	d, err := thread.NewBuilder(nil).WithGoal("Fix the flaky test").InteractiveLinear(meta).
		WithInitialPrompt(thread.Stitch{Content: "please look", Source: thread.PlatformLinear, ExternalID: "prompt-" + meta.SessionID}).
		Draft(context.Background())
	require.NoError(t, err)
	return d
}

func linearInbound(deliveryID, eventKey string) *thread.Inbound {
	return &thread.Inbound{Platform: thread.PlatformLinear, DeliveryID: deliveryID, EventKey: eventKey,
		EventType: "AgentSessionEvent", Action: "created", Payload: json.RawMessage(`{"n":1}`)}
}

func ackOutbox(session string) thread.Outbox {
	return thread.Outbox{Platform: thread.PlatformLinear, Target: session, Kind: thread.OutboxThought,
		Body: thread.OutboxBody{Text: "On it."}.JSON()}
}

// write runs one Write in a transaction of its own, committed when it succeeds.
func write(t *testing.T, store *db.Store, w db.Write) (*db.Written, error) {
	t.Helper()
	var out *db.Written
	err := store.InTx(context.Background(), func(ctx context.Context, tx *db.Tx) error {
		var err error
		out, err = tx.Write(ctx, w)
		return err
	})
	return out, err
}

// ledgerThread is the thread a recorded delivery is linked to (uuid.Nil when
// none), and whether the delivery is recorded at all.
func ledgerThread(t *testing.T, store *db.Store, platform thread.Platform, deliveryID string) (uuid.UUID, bool) {
	t.Helper()
	var id *uuid.UUID
	err := store.Pool().QueryRow(context.Background(),
		`SELECT thread_id FROM webhook_deliveries WHERE platform = $1 AND delivery_id = $2`, platform, deliveryID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false
	}
	require.NoError(t, err)
	if id == nil {
		return uuid.Nil, true
	}
	return *id, true
}

func TestWriteNewThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ThreadInboundAndOutboxInOneWrite", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		d := linearDraft(t, meta)

		got, err := write(t, store, db.Write{New: d, Inbound: linearInbound("d1", meta.SessionID),
			Outbox: []thread.Outbox{ackOutbox(meta.SessionID)}})
		require.NoError(t, err)

		require.NotNil(t, got.Thread)
		require.Equal(t, d.Thread.ID, got.Thread.ID)
		require.Equal(t, thread.TypeInteractive, got.Thread.Type)
		require.Equal(t, thread.StatusPending, got.Thread.Status)
		require.Equal(t, int64(2), got.Thread.StitchCount)
		require.Equal(t, d.Thread.HeadStitchID, got.Thread.HeadStitchID)

		th, err := store.ThreadByLinearSession(ctx, meta.SessionID)
		require.NoError(t, err)
		require.Equal(t, d.Thread.ID, th.ID)
		att, err := store.LinearAttachment(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionActive, att.SessionStatus, "the draft's session status is stored")
		require.Equal(t, meta.IssueIdentifier, att.IssueIdentifier)
		require.Equal(t, meta.WorkspaceID, att.WorkspaceID)

		ss, err := store.Stitches(ctx, d.Thread.ID, db.StitchPage{})
		require.NoError(t, err)
		require.Len(t, ss, 2)
		require.Equal(t, d.Stitches[0].ID, ss[0].ID)
		require.Equal(t, thread.StitchSystemPrompt, ss[0].Type)
		require.Equal(t, d.Stitches[1].ID, ss[1].ID)
		require.Equal(t, thread.StitchInitialPrompt, ss[1].Type)
		require.Equal(t, "please look", ss[1].Content)
		requireChain(t, store, d.Thread.ID, 2)

		linked, ok := ledgerThread(t, store, thread.PlatformLinear, "d1")
		require.True(t, ok, "the delivery is recorded")
		require.Equal(t, d.Thread.ID, linked, "the delivery is linked to the new thread")

		require.Len(t, got.Outbox, 1)
		o := got.Outbox[0]
		require.NotEqual(t, uuid.Nil, o.ID, "an unset outbox id is made")
		require.Equal(t, d.Thread.ID, o.ThreadID)
		require.Equal(t, thread.OutboxPending, o.Status)
		require.Equal(t, meta.SessionID, o.Target)
		stored, err := store.ThreadOutbox(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Len(t, stored, 1)
		require.Equal(t, o.ID, stored[0].ID)
		require.Equal(t, thread.OutboxThought, stored[0].Kind)
		body, err := stored[0].Content()
		require.NoError(t, err)
		require.Equal(t, "On it.", body.Text)
	})

	dup := []struct {
		name  string
		again func(first *thread.Inbound) *thread.Inbound
	}{
		{"SameDeliveryID", func(first *thread.Inbound) *thread.Inbound {
			return linearInbound(first.DeliveryID, "session-other")
		}},
		{"SameEventKey", func(first *thread.Inbound) *thread.Inbound {
			return linearInbound("d-other", first.EventKey)
		}},
	}
	for _, tt := range dup {
		t.Run("DuplicateDeliveryRollsBack/"+tt.name, func(t *testing.T) {
			t.Parallel()
			store := dbtest.NewStore(t)
			meta := dbtest.LinearAttachment()
			first := linearInbound("d1", meta.SessionID)
			_, err := write(t, store, db.Write{New: linearDraft(t, meta), Inbound: first,
				Outbox: []thread.Outbox{ackOutbox(meta.SessionID)}})
			require.NoError(t, err)

			// Redelivered: a new draft with a new session, the same delivery.
			meta2 := dbtest.LinearAttachment()
			d2 := linearDraft(t, meta2)
			_, err = write(t, store, db.Write{New: d2, Inbound: tt.again(first),
				Outbox: []thread.Outbox{ackOutbox(meta2.SessionID)}})
			require.ErrorIs(t, err, thread.ErrDuplicateDelivery)
			require.ErrorIs(t, err, thread.ErrDuplicate)

			require.Equal(t, 1, countRows(t, store, "threads"), "the second thread was rolled back")
			require.Equal(t, 2, countRows(t, store, "stitches"))
			require.Equal(t, 1, countRows(t, store, "linear_thread_metadata"))
			require.Equal(t, 1, countRows(t, store, "webhook_deliveries"))
			require.Equal(t, 1, countRows(t, store, "platform_deliveries"))
			_, err = store.ThreadByLinearSession(ctx, meta2.SessionID)
			require.ErrorIs(t, err, thread.ErrNotFound)
			_, err = store.Thread(ctx, d2.Thread.ID)
			require.ErrorIs(t, err, thread.ErrNotFound)
		})
	}

	t.Run("SessionAlreadyAttached", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		first := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: meta})

		d := linearDraft(t, meta)
		_, err := write(t, store, db.Write{New: d, Inbound: linearInbound("d2", "activity-2"),
			Outbox: []thread.Outbox{ackOutbox(meta.SessionID)}})
		require.ErrorIs(t, err, thread.ErrLinearSessionAttached)
		require.ErrorIs(t, err, thread.ErrConflict)

		require.Equal(t, 1, countRows(t, store, "threads"))
		require.Equal(t, 2, countRows(t, store, "stitches"))
		require.Zero(t, countRows(t, store, "webhook_deliveries"), "the delivery is rolled back with the thread")
		require.Zero(t, countRows(t, store, "platform_deliveries"))
		got, err := store.ThreadByLinearSession(ctx, meta.SessionID)
		require.NoError(t, err)
		require.Equal(t, first.ID, got.ID)
	})
}

func TestWriteStitches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)

	named := thread.NewID()
	got, err := write(t, store, db.Write{
		ThreadID: th.ID,
		Stitches: []thread.Stitch{
			{Type: thread.StitchLLMCall, Model: "m", InputTokens: 3, OutputTokens: 4},
			{ID: named, Type: thread.StitchAgentThought, Content: "hmm"},
			{Type: thread.StitchThreadResult, Content: "done"},
		},
		Outbox: []thread.Outbox{{Platform: thread.PlatformLinear, Target: "session-1", StitchID: named,
			Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: "hmm"}.JSON()}},
	})
	require.NoError(t, err)
	require.Nil(t, got.Thread, "no thread made and no status changed")

	require.Len(t, got.Stitches, 3)
	prev := th.HeadStitchID
	for i, s := range got.Stitches {
		require.Equal(t, int64(3+i), s.Seq, "stitch %d", i)
		require.Equal(t, prev, s.PreviousID, "stitch %d chains to its predecessor", i)
		require.Equal(t, th.ID, s.ThreadID)
		require.NotEqual(t, uuid.Nil, s.ID)
		prev = s.ID
	}
	require.Equal(t, named, got.Stitches[1].ID, "a preset id is kept")
	require.Equal(t, "hmm", got.Stitches[1].Content)
	require.Equal(t, 4, got.Stitches[0].OutputTokens)
	requireChain(t, store, th.ID, 5)

	require.Len(t, got.Outbox, 1)
	require.Equal(t, named, got.Outbox[0].StitchID)
	require.Equal(t, th.ID, got.Outbox[0].ThreadID)
	stored, err := store.Outbox(ctx, got.Outbox[0].ID)
	require.NoError(t, err)
	require.Equal(t, named, stored.StitchID)

	t.Run("InvalidStitchSendsNothing", func(t *testing.T) {
		_, err := write(t, store, db.Write{ThreadID: th.ID, Stitches: []thread.Stitch{
			{Type: thread.StitchAgentThought, Content: "fine"},
			{Type: "bogus"},
		}})
		require.ErrorIs(t, err, thread.ErrInvalid)
		requireChain(t, store, th.ID, 5)
	})
}

func TestWriteStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	running := thread.StatusChange{To: thread.StatusRunning}
	completed := thread.StatusChange{To: thread.StatusCompleted, Result: json.RawMessage(`{"ok":true}`)}
	waiting := thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}

	tests := []struct {
		name   string
		before []thread.StatusChange // applied first, with SetStatus
		change thread.StatusChange
		from   thread.Status // the status a refused change names; "" when permitted
	}{
		{"PendingToRunning", nil, running, ""},
		{"RunningToCompleted", []thread.StatusChange{running}, completed, ""},
		{"CompletedReopens", []thread.StatusChange{running, completed}, running, ""},
		{"PendingToCompletedRefused", nil, completed, thread.StatusPending},
		{"PendingToWaitingRefused", nil, waiting, thread.StatusPending},
		{"CompletedToWaitingRefused", []thread.StatusChange{running, completed}, waiting, thread.StatusCompleted},
		{"RunningToPendingRefused", []thread.StatusChange{running}, thread.StatusChange{To: thread.StatusPending}, thread.StatusRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := dbtest.NewStore(t)
			th := dbtest.Thread(ctx, t, store, nil)
			for _, c := range tt.before {
				_, err := store.SetStatus(ctx, th.ID, c)
				require.NoError(t, err)
			}
			cur, err := store.Thread(ctx, th.ID)
			require.NoError(t, err)
			require.Equal(t, tt.from == "", thread.CanTransition(cur.Status, tt.change.To), "the case agrees with the status machine")

			change := tt.change
			got, err := write(t, store, db.Write{ThreadID: th.ID, Status: &change})
			after, gerr := store.Thread(ctx, th.ID)
			require.NoError(t, gerr)
			if tt.from == "" {
				require.NoError(t, err)
				require.NotNil(t, got.Thread)
				require.Equal(t, th.ID, got.Thread.ID)
				require.Equal(t, tt.change.To, got.Thread.Status)
				require.Equal(t, tt.change.To, after.Status)
				return
			}
			require.Error(t, err)
			var te *thread.TransitionError
			require.ErrorAs(t, err, &te)
			require.Equal(t, tt.from, te.From)
			require.Equal(t, tt.change.To, te.To)
			require.ErrorIs(t, err, thread.ErrConflict)
			require.Equal(t, cur.Status, after.Status, "a refused change changes nothing")
		})
	}

	t.Run("RefusedAfterStitchesRollsBack", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		th := dbtest.Thread(ctx, t, store, nil)
		change := completed
		_, err := write(t, store, db.Write{ThreadID: th.ID,
			Stitches: []thread.Stitch{{Type: thread.StitchThreadResult, Content: "done"}}, Status: &change})
		var te *thread.TransitionError
		require.ErrorAs(t, err, &te)
		require.Equal(t, thread.StatusPending, te.From)
		requireChain(t, store, th.ID, 2)
	})

	t.Run("UnknownThread", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		change := running
		_, err := write(t, store, db.Write{ThreadID: thread.NewID(), Status: &change})
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	t.Run("InvalidChange", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		th := dbtest.Thread(ctx, t, store, nil)
		_, err := write(t, store, db.Write{ThreadID: th.ID, Status: &thread.StatusChange{To: thread.StatusWaiting}})
		require.ErrorIs(t, err, thread.ErrInvalid)
	})
}

func TestWriteSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SetsStatus", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: meta})
		before, err := store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionPending, before.SessionStatus)

		got, err := write(t, store, db.Write{ThreadID: th.ID,
			Session: &db.SessionChange{SessionID: meta.SessionID, Status: thread.SessionAwaitingInput}})
		require.NoError(t, err)
		require.Nil(t, got.Thread)
		after, err := store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionAwaitingInput, after.SessionStatus)
		require.False(t, after.LastActivityAt.Before(before.LastActivityAt))
	})

	t.Run("UnknownSession", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
		_, err := write(t, store, db.Write{ThreadID: th.ID,
			Stitches: []thread.Stitch{{Type: thread.StitchAgentThought, Content: "hmm"}},
			Session:  &db.SessionChange{SessionID: "no-such-session", Status: thread.SessionActive}})
		require.ErrorIs(t, err, thread.ErrNotFound)
		requireChain(t, store, th.ID, 2)
	})

	t.Run("InvalidStatusSendsNothing", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: meta})
		// The transaction commits despite the failed Write: had the stitch
		// been sent, it would be stored.
		err := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
			_, err := tx.Write(ctx, db.Write{ThreadID: th.ID,
				Stitches: []thread.Stitch{{Type: thread.StitchAgentThought, Content: "hmm"}},
				Outbox:   []thread.Outbox{ackOutbox(meta.SessionID)},
				Session:  &db.SessionChange{SessionID: meta.SessionID, Status: "bogus"}})
			require.ErrorIs(t, err, thread.ErrInvalid)
			_, err = tx.Thread(ctx, th.ID)
			return err
		})
		require.NoError(t, err, "the transaction is still usable")
		requireChain(t, store, th.ID, 2)
		require.Zero(t, countRows(t, store, "platform_deliveries"))
		att, err := store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionPending, att.SessionStatus)
	})
}

func TestWriteEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	for _, w := range []db.Write{{}, {ThreadID: th.ID}} {
		got, err := write(t, store, w)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Nil(t, got.Thread)
		require.Empty(t, got.Stitches)
		require.Empty(t, got.Outbox)
	}
	requireChain(t, store, th.ID, 2)
}

func TestInputSurface(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("Linear", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		d := linearDraft(t, meta)
		_, err := write(t, store, db.Write{New: d})
		require.NoError(t, err)
		p, target, err := store.InputSurface(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Equal(t, thread.PlatformLinear, p)
		require.Equal(t, meta.SessionID, target)

		// Output stitches are not input: the surface stays.
		_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: d.Thread.ID, Type: thread.StitchAgentThought,
			Content: "hmm", Source: thread.PlatformDiscord})
		require.NoError(t, err)
		p, target, err = store.InputSurface(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Equal(t, thread.PlatformLinear, p)
		require.Equal(t, meta.SessionID, target)
	})

	t.Run("DiscordUntilArchived", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.DiscordAttachment()
		th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: meta})
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage,
			Content: "hi", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()})
		require.NoError(t, err)

		p, target, err := store.InputSurface(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.PlatformDiscord, p)
		require.Equal(t, meta.DiscordThreadID, target)

		require.NoError(t, store.SetDiscordActive(ctx, meta.DiscordThreadID, false))
		p, target, err = store.InputSurface(ctx, th.ID)
		require.NoError(t, err)
		require.Empty(t, p)
		require.Empty(t, target)
	})

	t.Run("NewestInputWinsWhenBothAttached", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		meta := dbtest.LinearAttachment()
		d := linearDraft(t, meta)
		_, err := write(t, store, db.Write{New: d})
		require.NoError(t, err)
		dm := dbtest.DiscordAttachment()
		dm.ThreadID = d.Thread.ID
		require.NoError(t, store.AttachDiscord(ctx, *dm))

		_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: d.Thread.ID, Type: thread.StitchDiscordMessage,
			Content: "continuing here", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()})
		require.NoError(t, err)
		p, target, err := store.InputSurface(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Equal(t, thread.PlatformDiscord, p)
		require.Equal(t, dm.DiscordThreadID, target)

		_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: d.Thread.ID, Type: thread.StitchLinearActivity,
			Content: "back on linear", Source: thread.PlatformLinear, ExternalID: "activity-" + meta.SessionID})
		require.NoError(t, err)
		p, target, err = store.InputSurface(ctx, d.Thread.ID)
		require.NoError(t, err)
		require.Equal(t, thread.PlatformLinear, p)
		require.Equal(t, meta.SessionID, target)
	})

	t.Run("Autonomous", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		th := dbtest.Thread(ctx, t, store, nil)
		p, target, err := store.InputSurface(ctx, th.ID)
		require.NoError(t, err)
		require.Empty(t, p)
		require.Empty(t, target)
	})

	t.Run("UnknownThread", func(t *testing.T) {
		t.Parallel()
		store := dbtest.NewStore(t)
		p, target, err := store.InputSurface(ctx, thread.NewID())
		require.NoError(t, err)
		require.Empty(t, p)
		require.Empty(t, target)
	})
}

// TestTurnStateAttached: a turn learns every live attachment of its thread,
// where echoes of its answer go, in the read it starts from.
func TestTurnStateAttached(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	meta := dbtest.LinearAttachment()
	d := linearDraft(t, meta)
	_, err := write(t, store, db.Write{New: d})
	require.NoError(t, err)
	id := d.Thread.ID
	linear := thread.Surface{Platform: thread.PlatformLinear, Target: meta.SessionID}
	st, err := store.TurnState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []thread.Surface{linear}, st.Attached)

	dm := dbtest.DiscordAttachment()
	dm.ThreadID = id
	require.NoError(t, store.AttachDiscord(ctx, *dm))
	sl := thread.SlackAttachment{ThreadID: id, TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", ChannelType: "channel", CreatedBy: "U1"}
	require.NoError(t, store.AttachSlack(ctx, sl))
	discord := thread.Surface{Platform: thread.PlatformDiscord, Target: dm.DiscordThreadID}
	slack := thread.Surface{Platform: thread.PlatformSlack, Target: thread.SlackTarget{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100"}.String()}
	st, err = store.TurnState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []thread.Surface{linear, discord, slack}, st.Attached)
	require.Equal(t, thread.PlatformLinear, st.Platform, "the input's surface is among them")

	// An archived Discord thread hears nothing.
	require.NoError(t, store.SetDiscordActive(ctx, dm.DiscordThreadID, false))
	st, err = store.TurnState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []thread.Surface{linear, slack}, st.Attached)

	none, err := store.TurnState(ctx, dbtest.Thread(ctx, t, store, nil).ID)
	require.NoError(t, err)
	require.Empty(t, none.Attached, "an autonomous thread has none")
}
