package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestStreamMessages walks one streamed answer's record: the model calls
// answering one input share it, a save after its delivery finished it is
// refused unless it replaces it, the delivery of a row from the answer's
// stitch claims it (again when sent again, never for another row), and a
// later input's calls get an answer of their own.
func TestStreamMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(ctx, t, store, nil)
	appendStitch := func(s thread.Stitch) *thread.Stitch {
		t.Helper()
		s.ThreadID = th.ID
		got, err := store.AppendStitch(ctx, s)
		require.NoError(t, err)
		return got
	}
	chain, err := store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	require.Equal(t, thread.StitchSystemPrompt, chain[0].Type)
	_, ok, err := store.StreamOfCall(ctx, th.ID, chain[0].Seq, thread.PlatformSlack)
	require.NoError(t, err)
	require.False(t, ok, "no input up to the system prompt: nothing to answer")

	input := appendStitch(thread.Stitch{Type: thread.StitchInitialPrompt, Content: "What is up?"})
	s, ok, err := store.StreamOfCall(ctx, th.ID, input.Seq, thread.PlatformSlack)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, db.Streamed{AnswerSeq: input.Seq}, s, "no message yet")

	s.Target, s.Mode = "T1/C1/1.0", db.StreamNative
	begun, err := store.BeginStream(ctx, th.ID, thread.PlatformSlack, s, input.Seq)
	require.NoError(t, err)
	require.True(t, begun)
	begun, err = store.BeginStream(ctx, th.ID, thread.PlatformSlack, s, input.Seq)
	require.NoError(t, err)
	require.True(t, begun, "a message never made is begun again")

	// While its message is being created, a delivery is asked to wait,
	// then (past the wait) claims it without messages.
	early := appendStitch(thread.Stitch{Type: thread.StitchLLMCall, Content: "", Metadata: thread.Meta{AnsweredThrough: input.Seq}.JSON()})
	earlyRow := thread.Outbox{ID: uuid.New(), ThreadID: th.ID, StitchID: early.ID, Platform: thread.PlatformSlack, Target: s.Target}
	_, claim, err := store.ClaimStream(ctx, earlyRow, time.Minute)
	require.NoError(t, err)
	require.Equal(t, db.Creating, claim)
	begun, err = store.BeginStream(ctx, th.ID, thread.PlatformSlack, s, input.Seq)
	require.NoError(t, err)
	require.False(t, begun, "the call's outcome is recorded: its delivery posts")

	s.MessageIDs = []string{"2.0"}
	saved, err := store.SaveStream(ctx, th.ID, thread.PlatformSlack, s)
	require.NoError(t, err)
	require.True(t, saved)

	// The turn's next call (after a tool) writes into the same message.
	tool := appendStitch(thread.Stitch{Type: thread.StitchToolCall, Content: "ok", ToolName: "t", ToolInput: []byte(`{}`), ToolOutput: []byte(`"ok"`)})
	got, ok, err := store.StreamOfCall(ctx, th.ID, tool.Seq, thread.PlatformSlack)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, s, got)
	other, _, err := store.StreamOfCall(ctx, th.ID, tool.Seq, thread.PlatformDiscord)
	require.NoError(t, err)
	require.Empty(t, other.MessageIDs, "another platform's record is its own")

	answer := appendStitch(thread.Stitch{Type: thread.StitchLLMCall, Content: "All good.", Metadata: thread.Meta{AnsweredThrough: tool.Seq}.JSON()})
	row := thread.Outbox{ID: uuid.New(), ThreadID: th.ID, StitchID: answer.ID, Platform: thread.PlatformSlack, Target: s.Target, Kind: thread.OutboxResponse}

	wrongTarget := row
	wrongTarget.Target = "T1/C2/1.0"
	_, claim, err = store.ClaimStream(ctx, wrongTarget, time.Minute)
	require.NoError(t, err)
	require.Equal(t, db.NotStreamed, claim, "another conversation's row")

	claimed, claim, err := store.ClaimStream(ctx, row, time.Minute)
	require.NoError(t, err)
	require.Equal(t, db.Claimed, claim)
	require.Equal(t, db.Streamed{AnswerSeq: s.AnswerSeq, Target: s.Target, MessageIDs: s.MessageIDs, Mode: s.Mode}, claimed)
	claimed, claim, err = store.ClaimStream(ctx, row, time.Minute)
	require.NoError(t, err)
	require.Equal(t, db.Claimed, claim, "the same row sent again finds its message")
	require.Equal(t, s.MessageIDs, claimed.MessageIDs)
	second := row
	second.ID = uuid.New()
	_, claim, err = store.ClaimStream(ctx, second, time.Minute)
	require.NoError(t, err)
	require.Equal(t, db.NotStreamed, claim, "another row of the answer posts on its own")

	// Finished: a call of the answer no longer finds it, a save is
	// refused, a new beginning replaces it.
	got, _, err = store.StreamOfCall(ctx, th.ID, tool.Seq, thread.PlatformSlack)
	require.NoError(t, err)
	require.Empty(t, got.MessageIDs)
	saved, err = store.SaveStream(ctx, th.ID, thread.PlatformSlack, s)
	require.NoError(t, err)
	require.False(t, saved, "a finished message is not written again")
	begun, err = store.BeginStream(ctx, th.ID, thread.PlatformSlack, s, answer.Seq)
	require.NoError(t, err)
	require.True(t, begun)

	// A new input is a new answer.
	next := appendStitch(thread.Stitch{Type: thread.StitchSlackMessage, Content: "And now?", Source: thread.PlatformSlack, ExternalID: "ev1",
		Author: &thread.Author{ID: "U0ASKER", Name: "ada"}})
	got, ok, err = store.StreamOfCall(ctx, th.ID, next.Seq, thread.PlatformSlack)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, db.Streamed{AnswerSeq: next.Seq, AskerID: "U0ASKER"}, got)
}
