package admission

import (
	"bufio"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLimitConnsAnswersPastTheBound serves with a bound of one connection:
// a second connection, while the first is open, gets a 503 at once rather
// than waiting in the accept queue, and once the first closes a new one is
// served.
func TestLimitConnsAnswersPastTheBound(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go func() { _ = srv.Serve(LimitConns(ln, 1)) }()
	t.Cleanup(func() { _ = srv.Close() })

	get := func(c net.Conn) *http.Response {
		t.Helper()
		_, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: weft\r\n\r\n"))
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	first, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, get(first).StatusCode)

	second, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer second.Close()
	resp := get(second)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.True(t, resp.Close, "a refused connection is closed")

	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		third, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer third.Close()
		return get(third).StatusCode == http.StatusOK
	}, 5e9, 1e7, "the first connection's place is given back when it closes")
}
