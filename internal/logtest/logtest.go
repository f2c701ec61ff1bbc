// Package logtest gives tests a *slog.Logger that writes to t.Log, so a
// test's logs appear with its failure and nowhere else.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// New returns a logger writing text lines to t.Log at debug level.
func New(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(&writer{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type writer struct {
	mu sync.Mutex
	t  testing.TB
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
