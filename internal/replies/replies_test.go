package replies_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

func TestGetStoredThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	conv := repliestest.NewConversation(ctx, t, store, 250)
	svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
	require.NoError(t, err)

	tests := []struct {
		name  string
		id    string
		limit int
		order replies.Order
	}{
		{"OldestDefaultLimit", conv.Thread.ID.String(), 0, ""},
		{"NewestDefaultLimit", conv.Thread.ID.String(), 0, replies.Newest},
		{"OldestOddLimit", conv.Thread.ID.String(), 7, replies.Oldest},
		{"NewestOddLimit", conv.Thread.ID.String(), 7, replies.Newest},
		{"OldestMaxLimit", conv.Thread.ID.String(), replies.MaxLimit, replies.Oldest},
		{"ByTrackedDiscordThread", conv.DiscordThreadID, 100, replies.Newest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			limit := tt.limit
			if limit == 0 {
				limit = replies.DefaultLimit
			}
			got := repliestest.Walk(t, limit, func(cursor string) *replies.Response {
				resp, err := svc.Get(ctx, replies.Request{ThreadID: tt.id, Limit: tt.limit, Order: tt.order, Cursor: cursor})
				require.NoError(t, err)
				require.Equal(t, replies.SourceWeft, resp.Source)
				require.Equal(t, "test goal", *resp.Parent.Text)
				require.Equal(t, string(thread.StitchInitialPrompt), resp.Parent.Subtype)
				return resp
			})
			conv.Check(t, got, tt.order == replies.Newest)
		})
	}

	t.Run("AuthorsOfPeopleAndAgent", func(t *testing.T) {
		t.Parallel()
		resp, err := svc.Get(ctx, replies.Request{ThreadID: conv.Thread.ID.String(), Limit: 2})
		require.NoError(t, err)
		require.Equal(t, &threadview.Author{ID: "42", Name: "alice"}, resp.Replies[0].Author)
		require.Equal(t, string(thread.StitchDiscordMessage), resp.Replies[0].Subtype)
		require.NotEmpty(t, resp.Replies[0].ExternalID)
		require.Equal(t, &threadview.Author{Name: "weft", Bot: true}, resp.Replies[1].Author)
		require.Nil(t, resp.Parent.Author, "a prompt from the API has no author")
	})
}

func TestGetInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newMemStore("prompt", "a", "b", "c")
	svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
	require.NoError(t, err)
	id := store.thread.ID.String()
	first, err := svc.Get(ctx, replies.Request{ThreadID: id, Limit: 1})
	require.NoError(t, err)
	other := newMemStore("other")
	other.thread.ID = thread.NewID()

	tests := []struct {
		name string
		req  replies.Request
		code httpapi.Code
	}{
		{"NotAThreadID", replies.Request{ThreadID: "general"}, httpapi.CodeInvalidArgument},
		{"EmptyThreadID", replies.Request{}, httpapi.CodeInvalidArgument},
		{"UnknownOrder", replies.Request{ThreadID: id, Order: "random"}, httpapi.CodeInvalidArgument},
		{"NegativeLimit", replies.Request{ThreadID: id, Limit: -1}, httpapi.CodeInvalidArgument},
		{"LimitAboveMaximum", replies.Request{ThreadID: id, Limit: replies.MaxLimit + 1}, httpapi.CodeInvalidArgument},
		{"GarbageCursor", replies.Request{ThreadID: id, Cursor: "not a cursor!"}, httpapi.CodeInvalidArgument},
		{"CursorOfAnotherOrder", replies.Request{ThreadID: id, Cursor: *first.NextCursor, Order: replies.Newest}, httpapi.CodeInvalidArgument},
		{"CursorOfAnotherThread", replies.Request{ThreadID: other.thread.ID.String(), Cursor: *first.NextCursor}, httpapi.CodeInvalidArgument},
		{"CursorOfAnotherEndpoint", replies.Request{ThreadID: id, Cursor: threadview.EncodeCursor(threadview.CursorThreads, id+" oldest", "2")}, httpapi.CodeInvalidArgument},
		{"CursorWithoutPosition", replies.Request{ThreadID: id, Cursor: threadview.EncodeCursor(threadview.CursorReplies, id+" oldest", "")}, httpapi.CodeInvalidArgument},
		{"UnknownThread", replies.Request{ThreadID: thread.NewID().String()}, httpapi.CodeNotFound},
		{"UntrackedDiscordThreadWithoutDiscord", replies.Request{ThreadID: "123456789012345678"}, httpapi.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := svc.Get(ctx, tt.req)
			var e *httpapi.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tt.code, e.Code)
			require.NotEmpty(t, e.Message)
		})
	}

	t.Run("KindsMatchTheDomain", func(t *testing.T) {
		t.Parallel()
		_, err := svc.Get(ctx, replies.Request{ThreadID: thread.NewID().String()})
		require.ErrorIs(t, err, thread.ErrNotFound)
		_, err = svc.Get(ctx, replies.Request{ThreadID: "x"})
		require.ErrorIs(t, err, thread.ErrInvalid)
	})
}

func TestGetRetriesStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	tests := []struct {
		name     string
		failures int
		fail     error
		attempts int
		code     httpapi.Code // "" for success
	}{
		{"TransientThenSuccess", 2, nil, 3, ""},
		{"ThreeTransientFailures", 5, nil, 3, httpapi.CodeUnavailable},
		{"NotFoundIsNotRetried", 5, thread.ErrNotFound, 1, httpapi.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newMemStore("prompt", "a")
			store.failNext(tt.failures, tt.fail)
			reg := prometheus.NewRegistry()
			svc, err := replies.New(replies.Config{Store: store, Registry: reg, Logger: logtest.New(t), RetryBase: 1})
			require.NoError(t, err)
			_, err = svc.Get(ctx, replies.Request{ThreadID: store.thread.ID.String()})
			require.Equal(t, tt.attempts, store.Calls())
			if tt.code == "" {
				require.NoError(t, err)
				require.Equal(t, 1.0, metricValue(t, reg, "weft_thread_replies_successes_total", "source", "weft"))
				return
			}
			var e *httpapi.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tt.code, e.Code)
			require.Equal(t, 1.0, metricValue(t, reg, "weft_thread_replies_failures_total", "code", string(tt.code)))
		})
	}

	t.Run("BackoffStopsWithTheContext", func(t *testing.T) {
		t.Parallel()
		store := newMemStore("prompt", "a")
		store.failNext(5, nil)
		// The default one second backoff would outlive the cancelled context.
		svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = svc.Get(cctx, replies.Request{ThreadID: store.thread.ID.String()})
		var e *httpapi.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, httpapi.CodeUnavailable, e.Code)
		require.Equal(t, 1, store.Calls())
	})
}

// metricValue reads one series of a counter or the sample count of a
// histogram from reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if label != "" && (l.GetName() != label || l.GetValue() != value) {
					continue
				}
				if h := m.GetHistogram(); h != nil {
					return float64(h.GetSampleCount())
				}
				return m.GetCounter().GetValue()
			}
			if label == "" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPaginationCounted: the origin's recordPagination, as a metric: a
// page with more after it, and a page read on from a cursor.
func TestPaginationCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newMemStore("prompt", "a", "b", "c")
	reg := prometheus.NewRegistry()
	svc, err := replies.New(replies.Config{Store: store, Registry: reg, Logger: logtest.New(t)})
	require.NoError(t, err)
	first, err := svc.Get(ctx, replies.Request{ThreadID: store.thread.ID.String(), Limit: 2})
	require.NoError(t, err)
	require.True(t, first.HasMore)
	last, err := svc.Get(ctx, replies.Request{ThreadID: store.thread.ID.String(), Limit: 2, Cursor: *first.NextCursor})
	require.NoError(t, err)
	require.False(t, last.HasMore)
	count := func(event string) float64 {
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if f.GetName() == "weft_thread_replies_pagination_total" && labels["source"] == "weft" && labels["event"] == event {
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatalf("no weft_thread_replies_pagination_total{source=weft,event=%s}", event)
		return 0
	}
	require.Equal(t, 1.0, count("has_more"))
	require.Equal(t, 1.0, count("continued"))
}

// A stored thread's messages carry get-thread-replies.md's ts and user: a
// Slack message its own ts, any other its time in that form.
func TestStoredMessagesHaveTSAndUser(t *testing.T) {
	t.Parallel()
	store := newMemStore("is the deploy green?", "checking", "green")
	store.stitches[1].Source, store.stitches[1].Type = thread.PlatformSlack, thread.StitchSlackMessage
	store.stitches[1].ExternalID = thread.SlackMessageID("T0TEAM", "C0CHAN", "1748768460.000200")
	store.stitches[1].Author = &thread.Author{ID: "U0ALICE", Name: "alice"}
	store.stitches[2].Author = nil
	store.stitches[2].Type = thread.StitchAgentThought
	svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
	require.NoError(t, err)
	resp, err := svc.Get(context.Background(), replies.Request{ThreadID: store.thread.ID.String()})
	require.NoError(t, err)
	require.Equal(t, "1748768400.000000", resp.Parent.TS, "the parent's time, as a ts")
	require.Equal(t, "42", resp.Parent.User)
	require.Equal(t, "1748768460.000200", resp.Replies[0].TS, "a Slack message's own ts")
	require.Equal(t, "U0ALICE", resp.Replies[0].User)
	require.Equal(t, "1748768520.000000", resp.Replies[1].TS)
	require.Empty(t, resp.Replies[1].User, "weft's own message names no user")
	require.Nil(t, resp.NextCursor)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	repliestest.CheckShape(t, raw)
}
