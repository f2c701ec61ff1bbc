// Package servetest is the rig end-to-end tests run weft in: a free
// address, `weft serve` running in the background until the test ends,
// and waits for its readiness and for the events a test needs.
//
// The test says how weft runs (in process, or as a child it can kill) and
// which fakes it points weft at; the rig owns the starting, the waiting and
// the stopping, so that every e2e test does them the same way.
package servetest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startTimeout bounds the waits: migrations, and a gateway shard a killed
// weft still leases, can take a while on a loaded machine.
const startTimeout = time.Minute

// Addr is a free loopback address for weft to listen on.
func Addr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Serve runs serve (weft serving on addr) until the test ends, when its
// context is cancelled and it must return nil, and waits until weft is
// ready. It returns weft's base URL.
func Serve(t testing.TB, addr string, serve func(context.Context) error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	base := "http://" + addr
	WaitReady(t, base)
	return base
}

// WaitReady waits until weft at base answers /readyz with 200: it listens
// and reaches its database.
func WaitReady(t testing.TB, base string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, startTimeout, 20*time.Millisecond, "weft serve at %s never became ready", base)
}

// Waiting is a context for a fake's waiter (such as a gateway's IDENTIFY
// or a Web API call): it ends with the test, or after a minute.
func Waiting(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	t.Cleanup(cancel)
	return ctx
}
