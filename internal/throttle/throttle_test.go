package throttle

import (
	"testing"
	"time"
)

// TestLatestHandsOnTheNewestText: the goroutine starts with the first
// Text and takes each newest text, a put-off text is taken again, and
// Close ends the goroutine and waits for it.
func TestLatestHandsOnTheNewestText(t *testing.T) {
	took := make(chan string)
	var l *Latest
	l = New(func() {
		for l.Wait() {
			text, dirty := l.Take()
			if !dirty {
				continue
			}
			took <- text
		}
		close(took)
	})
	l.Text("a")
	if got := <-took; got != "a" {
		t.Fatalf("took %q, want a", got)
	}
	l.Text("ab")
	if got := <-took; got != "ab" {
		t.Fatalf("took %q, want ab", got)
	}
	l.Again()
	if text, dirty := l.Take(); !dirty || text != "ab" {
		t.Fatalf("after Again: %q %v, want ab true", text, dirty)
	}
	l.Close()
	if _, open := <-took; open {
		t.Fatal("the goroutine took a text after Close")
	}
	if !l.Closed() || l.Wait() || l.Pause(time.Hour) {
		t.Fatal("a closed Latest still waits")
	}
	l.Close() // twice is fine
}

// TestLatestClosedUnstarted: Close before any Text returns at once.
func TestLatestClosedUnstarted(t *testing.T) {
	l := New(func() { t.Error("run started without a Text") })
	l.Close()
	if !l.Closed() {
		t.Fatal("not closed")
	}
}
