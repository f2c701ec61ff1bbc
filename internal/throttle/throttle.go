// Package throttle holds the loop behind every agent.PartialAnswer: the
// newest text of an answer a model is writing, handed to one goroutine
// that writes it somewhere (a database row, a chat message, a progress
// thought) at most once per pause, however fast the model writes.
package throttle

import (
	"sync"
	"time"
)

// Latest is an answer's newest text and the goroutine that writes it. Its
// Text and Close implement agent.PartialAnswer; the goroutine loops on
// Wait, Take and Pause until they report the answer closed.
type Latest struct {
	run       func()
	wake      chan struct{} // a new text waits
	closing   chan struct{} // Close was called
	closeOnce sync.Once
	done      chan struct{} // run has returned

	mu      sync.Mutex
	text    string
	dirty   bool
	started bool
}

// New returns a Latest whose first Text starts run in a goroutine.
func New(run func()) *Latest {
	return &Latest{run: run, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
}

// Text takes the newest text; it never blocks.
func (l *Latest) Text(text string) {
	l.mu.Lock()
	l.text, l.dirty = text, true
	start := !l.started
	l.started = true
	l.mu.Unlock()
	if start {
		go func() {
			defer close(l.done)
			l.run()
		}()
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops the writes and waits for the goroutine, if it started. It
// may be called more than once.
func (l *Latest) Close() {
	l.closeOnce.Do(func() { close(l.closing) })
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if started {
		<-l.done
	}
}

// Wait waits for a text newer than the last Take's; false when the answer
// closes first (a close wins over a text that came with it).
func (l *Latest) Wait() bool {
	select {
	case <-l.wake:
	case <-l.closing:
		return false
	}
	return !l.Closed()
}

// Take returns the newest text, and whether it changed since the last
// Take.
func (l *Latest) Take() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text, dirty := l.text, l.dirty
	l.dirty = false
	return text, dirty
}

// Again marks the newest text unwritten, for the next Take: a write that
// was put off.
func (l *Latest) Again() {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

// Pause waits d; false when the answer closes first.
func (l *Latest) Pause(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.closing:
		return false
	}
}

// Closed reports whether Close was called.
func (l *Latest) Closed() bool {
	select {
	case <-l.closing:
		return true
	default:
		return false
	}
}
