package replies_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// memStore is a stored thread in memory, for examples and for failures a
// real database will not produce on demand.
type memStore struct {
	thread   thread.Thread
	stitches []thread.Stitch // the parent first, then the replies

	mu       sync.Mutex
	failures int   // the next calls to fail with fail
	fail     error // default: a dropped connection
	calls    int
}

// newMemStore holds a thread whose parent is prompt and whose replies are
// texts, all from alice.
func newMemStore(prompt string, texts ...string) *memStore {
	id := uuid.MustParse("0192f1d2-0000-7000-8000-000000000001")
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	m := &memStore{thread: thread.Thread{ID: id, Goal: prompt, AgentName: "weft", Status: thread.StatusWaiting}}
	for i, text := range append([]string{prompt}, texts...) {
		typ := thread.StitchDiscordMessage
		if i == 0 {
			typ = thread.StitchInitialPrompt
		}
		m.stitches = append(m.stitches, thread.Stitch{
			ID: uuid.NewSHA1(id, []byte{byte(i)}), ThreadID: id, Seq: int64(i + 2), Type: typ, Content: text,
			Author: &thread.Author{ID: "42", Name: "alice"}, CreatedAt: at.Add(time.Duration(i) * time.Minute),
		})
	}
	return m
}

// errConnection is what a dropped database connection looks like here.
var errConnection = errors.New("connection reset by peer")

// failNext makes the next n calls fail with err (nil: errConnection).
func (m *memStore) failNext(n int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures, m.fail = n, err
}

// Calls counts the calls to Thread: one per attempt.
func (m *memStore) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func (m *memStore) Thread(_ context.Context, id uuid.UUID) (*thread.Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.failures > 0 {
		m.failures--
		if m.fail != nil {
			return nil, m.fail
		}
		return nil, errConnection
	}
	if id != m.thread.ID {
		return nil, thread.ErrNotFound
	}
	th := m.thread
	return &th, nil
}

func (m *memStore) ThreadByDiscordThread(context.Context, string) (*thread.Thread, error) {
	return nil, thread.ErrNotFound
}

func (m *memStore) SlackChannelTeam(context.Context, string) (string, error) {
	return "", thread.ErrNotFound
}

func (m *memStore) ThreadParent(context.Context, uuid.UUID) (*thread.Stitch, error) {
	s := m.stitches[0]
	return &s, nil
}

func (m *memStore) ThreadReplies(_ context.Context, _ uuid.UUID, p db.ReplyPage) ([]thread.Stitch, error) {
	var out []thread.Stitch
	for _, s := range m.stitches[1:] {
		if (p.After == 0 || s.Seq > p.After) && (p.Before == 0 || s.Seq < p.Before) {
			out = append(out, s)
		}
	}
	if p.Newest {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out[:min(len(out), p.Limit)], nil
}
