package db_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// conversation appends one stitch of every kind after a new thread's system
// prompt and initial prompt, and returns the thread and the contents that
// count as replies, in order.
func conversation(ctx context.Context, t *testing.T, store *db.Store) (*thread.Thread, []string) {
	t.Helper()
	th := dbtest.Thread(ctx, t, store, nil)
	steps := []struct {
		s     thread.Stitch
		reply bool
	}{
		{thread.Stitch{Type: thread.StitchLLMCall, Content: "let me look",
			LLMResponse: json.RawMessage(`{"content":"let me look","tool_calls":[{"id":"1","name":"read_memory"}]}`)}, false},
		{thread.Stitch{Type: thread.StitchAgentThought, Content: "let me look"}, true},
		{thread.Stitch{Type: thread.StitchToolCall, Content: "no memory", ToolName: "read_memory"}, false},
		{thread.Stitch{Type: thread.StitchLLMCall, Content: "the answer", LLMResponse: json.RawMessage(`{"content":"the answer"}`)}, true},
		{thread.Stitch{Type: thread.StitchThreadResult, Content: "the answer"}, false},
		{thread.Stitch{Type: thread.StitchDiscordMessage, Content: "thanks", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()}, true},
		{thread.Stitch{Type: thread.StitchLLMCall, LLMResponse: json.RawMessage(`{"content":""}`)}, false},
		{thread.Stitch{Type: thread.StitchClarificationRequest, Content: "which one?"}, true},
		{thread.Stitch{Type: thread.StitchLinearActivity, Content: "the red one", Source: thread.PlatformLinear, ExternalID: thread.NewID().String()}, true},
		{thread.Stitch{Type: thread.StitchThreadResult, Content: "done", ToolName: "complete_thread"}, true},
		{thread.Stitch{Type: thread.StitchError, Content: "model unreachable"}, true},
	}
	var want []string
	for _, st := range steps {
		st.s.ThreadID = th.ID
		_, err := store.AppendStitch(ctx, st.s)
		require.NoError(t, err)
		if st.reply {
			want = append(want, st.s.Content)
		}
	}
	return th, want
}

func contents(ss []thread.Stitch) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Content
	}
	return out
}

func TestThreadReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	th, want := conversation(ctx, t, store)

	t.Run("ParentIsTheInitialPrompt", func(t *testing.T) {
		t.Parallel()
		p, err := store.ThreadParent(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.StitchInitialPrompt, p.Type)
		require.Equal(t, int64(2), p.Seq)
	})

	t.Run("ParentOfUnknownThreadIsNotFound", func(t *testing.T) {
		t.Parallel()
		_, err := store.ThreadParent(ctx, thread.NewID())
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	tests := []struct {
		name string
		page db.ReplyPage
		want []string
	}{
		{"OnlyMessagesOldestFirst", db.ReplyPage{After: 2}, want},
		{"NewestFirst", db.ReplyPage{After: 2, Newest: true}, reversed(want)},
		{"Limit", db.ReplyPage{After: 2, Limit: 2}, want[:2]},
		{"Window", db.ReplyPage{After: 6, Before: 11}, []string{"thanks", "which one?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := store.ThreadReplies(ctx, th.ID, tt.page)
			require.NoError(t, err)
			require.Equal(t, tt.want, contents(got))
		})
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestSearchStitches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	conversation(ctx, t, store)
	newer := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Goal: new("ビルドが赤い 100%_done")})
	gone, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: newer.ID, Type: thread.StitchDiscordMessage,
		Content: "the secret answer", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake()})
	require.NoError(t, err)
	_, err = store.EditStitch(ctx, thread.PlatformDiscord, gone.ExternalID, db.StitchEdit{DeletedAt: time.Now()})
	require.NoError(t, err)

	tests := []struct {
		name    string
		query   string
		threads int
		matches int
	}{
		{"CaseInsensitiveSubstring", "ANSWER", 1, 1},
		{"NonLatin", "赤い", 1, 1},
		{"LikeWildcardsAreLiteral", "100%_", 1, 1},
		{"PercentAloneMatchesOnlyPercent", "%", 1, 1},
		{"SystemPromptNeverMatches", "weft", 0, 0},
		{"ToolOutputNeverMatches", "no memory", 0, 0},
		{"DeletedNeverMatches", "secret", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hits, err := store.SearchStitches(ctx, db.StitchSearch{Query: tt.query})
			require.NoError(t, err)
			require.Len(t, hits, tt.threads)
			if tt.threads > 0 {
				require.Equal(t, tt.matches, hits[0].Matches)
				require.Equal(t, hits[0].Stitch.ThreadID, hits[0].Thread.ID)
			}
		})
	}

	t.Run("EmptyQueryIsInvalid", func(t *testing.T) {
		t.Parallel()
		_, err := store.SearchStitches(ctx, db.StitchSearch{Query: "  "})
		require.ErrorIs(t, err, thread.ErrInvalid)
	})
}

func TestSearchStitchesNewestMatchFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	older, _ := conversation(ctx, t, store)
	newer, _ := conversation(ctx, t, store)
	_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: older.ID, Type: thread.StitchAgentThought, Content: "the answer again"})
	require.NoError(t, err)

	hits, err := store.SearchStitches(ctx, db.StitchSearch{Query: "the answer"})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	require.Equal(t, older.ID, hits[0].Thread.ID)
	require.Equal(t, "the answer again", hits[0].Stitch.Content)
	require.Equal(t, 2, hits[0].Matches)
	require.Equal(t, newer.ID, hits[1].Thread.ID)

	hits, err = store.SearchStitches(ctx, db.StitchSearch{Query: "the answer", Limit: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
}
