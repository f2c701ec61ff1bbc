// Package fakekit holds what every wire-level fake of a platform (the
// <platform>test packages) shares: the TB a fake takes from a
// test, one vocabulary of faults and the rules that schedule them, the
// recorded traffic tests read and wait on, and the HMAC signing webhook
// deliveries carry. The fakes speak their platform's protocol; this
// package holds nothing a platform decides.
//
// Like the fakes, it is not built on package testing, so that weft demo
// and weft-bench can link them. Nothing outside fakes may import it but
// the tests that give them faults.
package fakekit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
)

// TB is what a fake needs of a test (a *testing.T has it). A fake given a
// nil TB (a demo) is closed by its caller and logs nowhere.
type TB interface {
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// CloseAtEnd closes a fake when the test ends; with a nil t (a demo) the
// caller closes it.
func CloseAtEnd(t TB, close func()) {
	if t != nil {
		t.Cleanup(close)
	}
}

// Log is the traffic a fake recorded, in arrival order. Tests read it, or
// wait until it holds what they need. The zero Log is empty and ready.
type Log[T any] struct {
	mu    sync.Mutex
	items []T
	grew  chan struct{} // closed and replaced on every Add
}

// Add records v and wakes every waiter.
func (l *Log[T]) Add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, v)
	if l.grew != nil {
		close(l.grew)
		l.grew = nil
	}
}

// All is a copy of everything recorded so far.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// Wait blocks until done holds for what is recorded, and returns it, or
// until ctx ends.
func (l *Log[T]) Wait(ctx context.Context, done func([]T) bool) ([]T, error) {
	for {
		l.mu.Lock()
		items := slices.Clone(l.items)
		if l.grew == nil {
			l.grew = make(chan struct{})
		}
		grew := l.grew
		l.mu.Unlock()
		if done(items) {
			return items, nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return items, context.Cause(ctx)
		}
	}
}

// HMACHex is the hex HMAC-SHA256 of the message parts under secret, the
// signature most platforms put on their webhook deliveries.
func HMACHex(secret []byte, parts ...[]byte) string {
	m := hmac.New(sha256.New, secret)
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Signal wakes the tests waiting for a fake's state to change, for state
// that is not a Log (a status set, a socket connected). The zero Signal
// is ready.
type Signal struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every Notify
}

// Notify wakes every waiter, after the state changed.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Wait blocks until cond holds, checking it at once and after each
// Notify, or until ctx ends.
func (s *Signal) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
