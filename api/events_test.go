package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
)

// liveBundle is the API with event streams on, served on a loopback port
// (a stream stays open, which apitest's recorder cannot follow).
type liveBundle struct {
	store   *db.Store
	srv     *httptest.Server
	checked http.Handler // the same API behind apitest, for answers that end
}

func setupLive(t *testing.T) *liveBundle {
	t.Helper()
	pool := dbtest.NewPool(t)
	logger := logtest.New(t)
	store := db.New(pool, logger)
	h := api.NewServer(api.Deps{
		Logger: logger, DB: store, Token: token, Store: store, Live: store,
		Listen: func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
		},
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &liveBundle{store: store, srv: srv, checked: apitest.Handler(t, h)}
}

// sse is one event read off a stream.
type sse struct {
	event, id, data string
}

// open starts a stream on th, resuming after lastID when it is not empty,
// and returns its events as they come; the stream ends with ctx.
func (b *liveBundle) open(ctx context.Context, t *testing.T, th *thread.Thread, lastID string) <-chan sse {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/api/v1/threads/"+th.ID.String()+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan sse, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" {
					out <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// next is the next event, failing the test when the stream ended.
func next(t *testing.T, events <-chan sse) sse {
	t.Helper()
	ev, ok := <-events
	require.True(t, ok, "the stream ended")
	return ev
}

// stitchSeqs reads stitch events until the status event that ends a
// catch-up, returning their ids.
func stitchSeqs(t *testing.T, events <-chan sse) []string {
	t.Helper()
	var ids []string
	for {
		ev := next(t, events)
		if ev.event == "status" {
			return ids
		}
		require.Equal(t, "stitch", ev.event)
		ids = append(ids, ev.id)
	}
}

func appendStitch(t *testing.T, store *db.Store, th *thread.Thread, s thread.Stitch) int64 {
	t.Helper()
	s.ThreadID = th.ID
	got, err := store.AppendStitch(context.Background(), s)
	require.NoError(t, err)
	return got.Seq
}

// TestThreadEventsStreamPartialThenStitch follows a thread while its
// answer streams: the client sees the partial text grow, then the stitch
// that records the answer, then the partial text end.
func TestThreadEventsStreamPartialThenStitch(t *testing.T) {
	t.Parallel()
	b := setupLive(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	th := dbtest.Thread(ctx, t, b.store, nil)

	events := b.open(ctx, t, th, "")
	caughtUp := stitchSeqs(t, events)
	require.NotEmpty(t, caughtUp, "the thread's first stitches")
	last, err := strconv.ParseInt(caughtUp[len(caughtUp)-1], 10, 64)
	require.NoError(t, err)

	w := partial.New(partial.Deps{Store: b.store, Logger: logtest.New(t), Interval: time.Millisecond})
	answer := w.Open(ctx, th, last)
	answer.Text("The build is red")
	var p struct {
		AfterSeq int64  `json:"after_seq"`
		Text     string `json:"text"`
	}
	ev := next(t, events)
	require.Equal(t, "partial", ev.event)
	require.Empty(t, ev.id, "partial text moves no resume point")
	require.NoError(t, json.Unmarshal([]byte(ev.data), &p))
	require.Equal(t, last, p.AfterSeq)
	require.Equal(t, "The build is red", p.Text)
	answer.Text("The build is red because of a flaky test.")
	for p.Text != "The build is red because of a flaky test." {
		ev = next(t, events)
		require.Equal(t, "partial", ev.event)
		require.NoError(t, json.Unmarshal([]byte(ev.data), &p))
	}

	seq := appendStitch(t, b.store, th, thread.Stitch{Type: thread.StitchLLMCall, Content: "The build is red because of a flaky test.", Model: "m"})
	answer.Close()
	ev = next(t, events)
	require.Equal(t, "stitch", ev.event)
	require.Equal(t, strconv.FormatInt(seq, 10), ev.id)
	var st struct {
		Seq     int64  `json:"seq"`
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.data), &st))
	require.Equal(t, "llm_call", st.Type)
	require.Equal(t, "The build is red because of a flaky test.", st.Content)
	ev = next(t, events)
	require.Equal(t, "partial_end", ev.event)
	require.JSONEq(t, `{"after_seq":`+strconv.FormatInt(last, 10)+`}`, ev.data)
}

// TestThreadEventsResume reconnects with Last-Event-ID after stitches were
// written while no stream was open: each is sent once, none missed.
func TestThreadEventsResume(t *testing.T) {
	t.Parallel()
	b := setupLive(t)
	th := dbtest.Thread(t.Context(), t, b.store, nil)

	first, cancel := context.WithCancel(t.Context())
	events := b.open(first, t, th, "")
	seen := stitchSeqs(t, events)
	a := appendStitch(t, b.store, th, thread.Stitch{Type: thread.StitchAgentThought, Content: "one"})
	ev := next(t, events)
	require.Equal(t, strconv.FormatInt(a, 10), ev.id)
	cancel() // the connection drops
	for range events {
	}

	missed := []int64{
		appendStitch(t, b.store, th, thread.Stitch{Type: thread.StitchAgentThought, Content: "two"}),
		appendStitch(t, b.store, th, thread.Stitch{Type: thread.StitchAgentThought, Content: "three"}),
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events = b.open(ctx, t, th, ev.id)
	require.Equal(t, []string{strconv.FormatInt(missed[0], 10), strconv.FormatInt(missed[1], 10)}, stitchSeqs(t, events))
	require.NotContains(t, seen, strconv.FormatInt(missed[0], 10))

	// And resuming from the start sends them all, in order.
	all := b.open(ctx, t, th, "0")
	require.Equal(t, append(append(seen, ev.id), strconv.FormatInt(missed[0], 10), strconv.FormatInt(missed[1], 10)), stitchSeqs(t, all))
}

// TestThreadEventsRefused checks the answers that end at once: each a
// documented error, and no watch left behind.
func TestThreadEventsRefused(t *testing.T) {
	t.Parallel()
	b := setupLive(t)
	th := dbtest.Thread(t.Context(), t, b.store, nil)
	path := "/api/v1/threads/" + th.ID.String() + "/events"
	tests := []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{name: "NoToken", path: path, want: http.StatusUnauthorized},
		{name: "WrongToken", path: path, header: map[string]string{"Authorization": "Bearer nope"}, want: http.StatusUnauthorized},
		{name: "BadID", path: "/api/v1/threads/not-a-uuid/events", header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusBadRequest},
		{name: "UnknownThread", path: "/api/v1/threads/00000000-0000-4000-8000-000000000000/events",
			header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusNotFound},
		{name: "BadLastEventID", path: path, header: map[string]string{"Authorization": "Bearer " + token, "Last-Event-ID": "x"}, want: http.StatusBadRequest},
		{name: "NegativeAfter", path: path + "?after=-1", header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusBadRequest},
		{name: "Oversized", path: path + "?after=99999999999999999999999", header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			b.checked.ServeHTTP(rec, req)
			require.Equal(t, tt.want, rec.Code, rec.Body.String())
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		})
	}
	var watchers int
	require.NoError(t, b.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM stitch_watchers`).Scan(&watchers))
	require.Zero(t, watchers)
}

// TestThreadEventsOff answers 503 where no LISTEN connection is configured.
func TestThreadEventsOff(t *testing.T) {
	t.Parallel()
	store := dbtest.NewStore(t)
	th := dbtest.Thread(t.Context(), t, store, nil)
	h := apitest.Handler(t, api.NewServer(api.Deps{Logger: logtest.New(t), DB: store, Token: token, Store: store}))
	req := httptest.NewRequest(http.MethodGet, "/api/v1/threads/"+th.ID.String()+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
}
