package kit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadRun(t *testing.T) {
	t.Parallel()

	// fast is far above any rate a test machine sends at, so every
	// delivery is due at once.
	const fast = 1_000_000
	type testBundle struct {
		load *Load
		// hold, while open, keeps the server from answering.
		hold chan struct{}
	}
	setup := func(t *testing.T, maxInFlight int, handler func(b *testBundle, w http.ResponseWriter, r *http.Request)) *testBundle {
		t.Helper()
		b := &testBundle{hold: make(chan struct{})}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler(b, w, r) }))
		t.Cleanup(srv.Close)
		b.load = NewLoad(srv.URL, 5*time.Second, maxInFlight)
		t.Cleanup(b.load.Close)
		return b
	}
	deliveries := func(n int) []Delivery {
		out := make([]Delivery, n)
		for i := range out {
			out[i] = Delivery{Body: []byte(`{}`), Header: http.Header{"X-Index": {strconv.Itoa(i)}}}
		}
		return out
	}

	t.Run("ResultsInScheduleOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 64, func(_ *testBundle, w http.ResponseWriter, r *http.Request) {
			i, _ := strconv.Atoi(r.Header.Get("X-Index"))
			w.WriteHeader(http.StatusOK + i%2) // 200 or 201
		})
		results := b.load.Run(t.Context(), fast, deliveries(40))
		require.Len(t, results, 40)
		for i, r := range results {
			require.NoError(t, r.Err, i)
			require.Equal(t, http.StatusOK+i%2, r.Status, i)
			require.False(t, r.Sent.IsZero(), i)
		}
	})

	t.Run("SaturatesPastMaxInFlight", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 2, func(b *testBundle, w http.ResponseWriter, r *http.Request) {
			select {
			case <-b.hold:
			case <-r.Context().Done():
			}
		})
		t.Cleanup(func() { close(b.hold) })
		// The server never answers, so the two senders stay busy until
		// the client gives up, long after the last delivery was due: the
		// three others find no sender free, and fail in the generator, not
		// the server.
		b.load.Client.Timeout = time.Second
		tally := Count(b.load.Run(t.Context(), fast, deliveries(5)))
		require.Equal(t, 2, tally.Failed)
		require.Equal(t, 3, tally.Saturated)
	})

	t.Run("StopsWhenContextEnds", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		b := setup(t, 8, func(_ *testBundle, w http.ResponseWriter, _ *http.Request) {
			cancel()
			w.WriteHeader(http.StatusOK)
		})
		// One a second: the first is sent, and the run ends while it
		// waits for the second.
		results := b.load.Run(ctx, 1, deliveries(3))
		require.Len(t, results, 1)
	})
}
