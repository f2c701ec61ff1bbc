package linear_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/logtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// sessionOf is an Attachments with one thread's session.
type sessionOf map[uuid.UUID]*thread.LinearAttachment

func (s sessionOf) LinearAttachment(_ context.Context, id uuid.UUID) (*thread.LinearAttachment, error) {
	if a, ok := s[id]; ok {
		return a, nil
	}
	return nil, thread.ErrNotFound
}

type thoughtsBundle struct {
	srv      *lineartest.Server
	thoughts *surfacelinear.Thoughts
	th       *thread.Thread
	session  string
}

func newThoughts(t *testing.T, interval time.Duration, active bool) *thoughtsBundle {
	t.Helper()
	srv := lineartest.NewServer(t)
	session := uuid.NewString()
	srv.AddSession(session, "")
	client := linearapi.NewClient(linearapi.ClientDeps{Endpoint: srv.URL(), Budget: linearapi.NewBudget(0),
		Tokens: linearapi.StaticToken(lineartest.AccessToken), Retry: linearapi.Retry{MaxAttempts: 1}})
	th := &thread.Thread{ID: uuid.New()}
	att := sessionOf{th.ID: {ThreadID: th.ID, SessionID: session, WorkspaceID: lineartest.OrganizationID, Active: active}}
	return &thoughtsBundle{srv: srv, th: th, session: session, thoughts: surfacelinear.NewThoughts(surfacelinear.ThoughtsDeps{
		Client: client, Attachments: att, Interval: interval, Logger: logtest.New(t)})}
}

// waitFor polls cond with a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, what)
}

// TestThoughtsPostProgress posts an answer's text so far as ephemeral
// thoughts, the newest text each time, and nothing for a thread without
// an active session.
func TestThoughtsPostProgress(t *testing.T) {
	t.Parallel()
	b := newThoughts(t, time.Millisecond, true)
	a := b.thoughts.Open(context.Background(), b.th, 1)
	a.Text("The")
	waitFor(t, "a first thought", func() bool { return len(b.srv.Activities(b.session)) == 1 })
	a.Text("The answer")
	waitFor(t, "a second thought", func() bool { return len(b.srv.Activities(b.session)) == 2 })
	a.Close()
	acts := b.srv.Activities(b.session)
	for _, act := range acts {
		require.Equal(t, "thought", act.Type)
		require.True(t, act.Ephemeral, "a progress thought is ephemeral")
	}
	require.Equal(t, "The answer", acts[1].Body)
	require.Len(t, b.srv.Shown(b.session), 1, "each thought replaces the one before")
	posted, folded, failed := b.thoughts.Counts()
	require.Equal(t, [3]uint64{2, 0, 0}, [3]uint64{posted, folded, failed})

	inactive := newThoughts(t, time.Millisecond, false)
	a = inactive.thoughts.Open(context.Background(), inactive.th, 1)
	a.Text("no session to show it")
	a.Close()
	require.Empty(t, inactive.srv.Activities(inactive.session))
	require.Empty(t, inactive.srv.Requests())
}

// TestThoughtsWaitAnInterval posts nothing before an interval has passed
// since the model call began: an answer written faster needs no progress.
func TestThoughtsWaitAnInterval(t *testing.T) {
	t.Parallel()
	b := newThoughts(t, time.Hour, true)
	a := b.thoughts.Open(context.Background(), b.th, 1)
	for _, text := range []string{"a", "a b", "a b c"} {
		a.Text(text)
	}
	a.Close()
	require.Empty(t, b.srv.Activities(b.session))
}

// TestThoughtsFoldWhenBudgetLow posts no thought while the workspace's
// budget is low, counting each one folded, and posts again once it is not.
func TestThoughtsFoldWhenBudgetLow(t *testing.T) {
	t.Parallel()
	b := newThoughts(t, time.Millisecond, true)
	// Linear reports the workspace nearly spent; the first answer the
	// client reads (the session lookup is not Linear's) tells it so.
	b.srv.SetRequestsRemaining(lineartest.OrganizationID, 50)
	a := b.thoughts.Open(context.Background(), b.th, 1)
	a.Text("first")
	// The first thought goes: the budget has not heard from Linear yet.
	waitFor(t, "the first thought", func() bool { return len(b.srv.Activities(b.session)) == 1 })
	a.Text("second")
	waitFor(t, "a folded thought", func() bool { _, folded, _ := b.thoughts.Counts(); return folded >= 1 })
	a.Close()
	require.Len(t, b.srv.Activities(b.session), 1, "no thought while the budget is low")
}

// TestThoughtsSettle stops an answer's thoughts once its session's
// response is about to go: nothing lands after the answer.
func TestThoughtsSettle(t *testing.T) {
	t.Parallel()
	b := newThoughts(t, time.Millisecond, true)
	a := b.thoughts.Open(context.Background(), b.th, 1)
	a.Text("draft")
	waitFor(t, "a thought", func() bool { return len(b.srv.Activities(b.session)) == 1 })
	b.thoughts.Settle(b.session)
	a.Text("draft, longer")
	a.Text("draft, longer still")
	a.Close()
	require.Len(t, b.srv.Activities(b.session), 1)
}
