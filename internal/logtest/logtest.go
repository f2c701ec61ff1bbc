// Package logtest gives tests a *slog.Logger that writes to t.Log, so a
// test's logs appear with its failure and nowhere else.
package logtest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// New returns a logger writing text lines to t.Log at debug level.
func New(t testing.TB) *slog.Logger { return newTo(&writer{t: t}) }

// Recording returns a logger like New's that also keeps its lines in the
// returned Buffer, for a test that checks what was logged.
func Recording(t testing.TB) (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return newTo(io.MultiWriter(&writer{t: t}, b)), b
}

func newTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
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

// Buffer keeps what is written to it, safe for concurrent writers and a
// reader: a recorded log, or a child process's output.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// grew is closed and replaced on every write, to wake Wait.
	grew chan struct{}
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew != nil {
		close(b.grew)
		b.grew = nil
	}
	return b.b.Write(p)
}

// Wait blocks until cond holds for everything written, checking it at
// once and after each write, or until ctx ends.
func (b *Buffer) Wait(ctx context.Context, cond func(string) bool) error {
	for {
		b.mu.Lock()
		if b.grew == nil {
			b.grew = make(chan struct{})
		}
		grew, s := b.grew, b.b.String()
		b.mu.Unlock()
		if cond(s) {
			return nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
