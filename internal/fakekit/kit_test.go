package fakekit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
)

func TestLogWaitWakesOnAdd(t *testing.T) {
	t.Parallel()
	var l fakekit.Log[int]
	go func() {
		for i := range 3 {
			l.Add(i)
		}
	}()
	got, err := l.Wait(t.Context(), func(xs []int) bool { return len(xs) == 3 })
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, got)
}

func TestLogWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	var l fakekit.Log[int]
	l.Add(1)
	ctx, cancel := context.WithCancelCause(t.Context())
	gone := errors.New("test over")
	cancel(gone)
	got, err := l.Wait(ctx, func(xs []int) bool { return len(xs) == 2 })
	require.ErrorIs(t, err, gone)
	require.Equal(t, []int{1}, got)
}

func TestSignalWaitWakesOnNotify(t *testing.T) {
	t.Parallel()
	var (
		s fakekit.Signal
		n atomic.Int32
	)
	go func() {
		for range 3 {
			n.Add(1)
			s.Notify()
		}
	}()
	require.NoError(t, s.Wait(t.Context(), func() bool { return n.Load() == 3 }))

	ctx, cancel := context.WithCancelCause(t.Context())
	gone := errors.New("test over")
	cancel(gone)
	require.ErrorIs(t, s.Wait(ctx, func() bool { return n.Load() == 4 }), gone)
}

func TestFaultsTakeInOrder(t *testing.T) {
	t.Parallel()
	var fs fakekit.Faults
	fs.Fail("a", 1, fakekit.Fail(502))
	fs.Fail("", 2, fakekit.Fail(503))
	fs.Fail("b", 0, fakekit.ErrorCode("forever"))
	var got []int
	for _, route := range []string{"b", "a", "a"} {
		f, ok := fs.Take(route)
		require.True(t, ok)
		got = append(got, f.Status)
	}
	require.Equal(t, []int{503, 502, 503}, got, "the any-route rule comes first for b, and runs out after two")
	_, ok := fs.Take("a")
	require.False(t, ok)
	for range 3 {
		f, ok := fs.Take("b")
		require.True(t, ok)
		require.Equal(t, "forever", f.Code)
	}
	fs.Heal("b")
	_, ok = fs.Take("b")
	require.False(t, ok)
}

// serve answers through Serve with f, counting applications (the
// handler's count happens before the drop the client sees); the
// platform's failure answer is a 418 with the fault's code.
func serve(t *testing.T, f fakekit.Fault, applied *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fakekit.Serve(w, r, f, func(w http.ResponseWriter) {
			applied.Add(1)
			_, _ = io.WriteString(w, "done")
		}, func(w http.ResponseWriter, f fakekit.Fault) {
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, f.Code)
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestServe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fault   fakekit.Fault
		status  int
		body    string
		applied int
		dropped bool
	}{
		{"PlatformFailure", fakekit.ErrorCode("nope"), http.StatusTeapot, "nope", 0, false},
		{"FailureAfterApplying", fakekit.ErrorCode("late").AfterApplying(), http.StatusTeapot, "late", 1, false},
		{"ProxyBody", fakekit.Fault{Status: http.StatusTooManyRequests, Body: "<html>"}, http.StatusTooManyRequests, "<html>", 0, false},
		{"LateSuccess", fakekit.Slow(time.Millisecond), http.StatusOK, "done", 1, false},
		{"AppliedLateSuccess", fakekit.Fault{Apply: true, Delay: time.Millisecond}, http.StatusOK, "done", 1, false},
		{"Dropped", fakekit.Dropped(), 0, "", 0, true},
		{"LostResponse", fakekit.LostResponse(), 0, "", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var applied atomic.Int32
			srv := serve(t, tt.fault, &applied)
			resp, err := http.Get(srv.URL)
			if tt.dropped {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, tt.status, resp.StatusCode)
				require.Equal(t, tt.body, string(body))
			}
			require.Equal(t, tt.applied, int(applied.Load()))
		})
	}
}

func TestHMACHex(t *testing.T) {
	t.Parallel()
	// RFC 4231 test case 2.
	require.Equal(t, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		fakekit.HMACHex([]byte("Jefe"), []byte("what do ya want "), []byte("for nothing?")))
}
