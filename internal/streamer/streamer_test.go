package streamer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/streamer"
	"github.com/weft-dev/weft/internal/thread"
)

// platform is a chat platform in memory: one message per answer, its
// writes noted.
type platform struct {
	mu     sync.Mutex
	writes []string // "begin <ids>", "<id>: <text>"
	next   int
	gate   chan struct{} // when set, creating a message waits for it
}

func (p *platform) Name() thread.Platform { return thread.PlatformDiscord }

func (p *platform) note(s string) {
	p.mu.Lock()
	p.writes = append(p.writes, s)
	p.mu.Unlock()
}

func (p *platform) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.writes...)
}

func (p *platform) Begin(_ context.Context, _ string, rec db.Streamed) (streamer.Writer, error) {
	p.note(fmt.Sprintf("begin %v", rec.MessageIDs))
	return &writer{p: p, ids: rec.MessageIDs}, nil
}

type writer struct {
	p   *platform
	ids []string
}

func (w *writer) Write(_ context.Context, text string) (bool, error) {
	if len(w.ids) == 0 {
		if w.p.gate != nil {
			<-w.p.gate
		}
		w.p.mu.Lock()
		w.p.next++
		w.ids = []string{fmt.Sprintf("m%d", w.p.next)}
		w.p.mu.Unlock()
		w.p.note(w.ids[0] + ": " + text)
		return true, nil
	}
	w.p.note(w.ids[0] + ": " + text)
	return false, nil
}

func (w *writer) Messages() ([]string, string) { return w.ids, db.StreamEdit }
func (w *writer) Pause() time.Duration         { return time.Millisecond }
func (w *writer) Abandon(context.Context)      {}

// discordThread is a thread whose input came from Discord.
func discordThread(ctx context.Context, t *testing.T, store *db.Store) (*thread.Thread, int64) {
	t.Helper()
	att := dbtest.DiscordAttachment()
	th, err := thread.NewBuilder(nil).WithGoal("why?").InteractiveDiscord(att).
		WithInitialPrompt(thread.Stitch{Content: "why?", Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(),
			Author: &thread.Author{ID: "ada", Name: "ada"}}).Build(ctx, store)
	require.NoError(t, err)
	chain, err := store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	return th, chain[len(chain)-1].Seq
}

// TestStreamerKeepsOneMessagePerAnswer: the calls of one answer (a
// retried or resumed call, one after a tool run) write into the message
// the first made; a call whose outcome is recorded makes none; a delivery
// that arrives while the message is being created waits for it and
// finishes it, after which nothing is written there.
func TestStreamerKeepsOneMessagePerAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	p := &platform{}
	s := streamer.New(streamer.Deps{Store: store, Platform: p, Logger: logtest.New(t)})
	th, after := discordThread(ctx, t, store)

	waitSeen := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool {
			seen := p.seen()
			return len(seen) > 0 && seen[len(seen)-1] == want
		}, 10*time.Second, time.Millisecond, "never saw %q: %v", want, p.seen())
	}

	a := s.Open(ctx, th, after)
	a.Text("The")
	waitSeen("m1: The")
	a.Text("The answer")
	waitSeen("m1: The answer")
	a.Close()

	// The call again (a crash, a retry): the same message.
	b := s.Open(ctx, th, after)
	b.Text("A")
	waitSeen("m1: A")
	b.Close()
	require.Equal(t, "begin [m1]", p.seen()[3])

	// Its outcome recorded, the answer is delivered: the row finishes m1.
	call, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall, Content: "All of it.",
		Metadata: thread.Meta{AnsweredThrough: after}.JSON()})
	require.NoError(t, err)
	row := thread.Outbox{ID: thread.NewID(), ThreadID: th.ID, StitchID: call.ID, Platform: thread.PlatformDiscord, Target: discordTarget(t, store, th)}
	rec, w, ok, err := s.Claim(ctx, row)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{"m1"}, rec.MessageIDs)
	require.NotNil(t, w, "this replica wrote it")

	// A late call of the answer (its outcome recorded) makes nothing.
	c := s.Open(ctx, th, after)
	c.Text("late")
	c.Close()
	for _, w := range p.seen() {
		require.NotContains(t, w, "late")
	}

	// A new input's answer, whose delivery comes while its message is
	// being created: the delivery waits, then finishes that message.
	in, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: "and?",
		Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(), Author: &thread.Author{ID: "ada", Name: "ada"}})
	require.NoError(t, err)
	p.gate = make(chan struct{})
	d := s.Open(ctx, th, in.Seq)
	d.Text("So")
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, store.Pool().QueryRow(ctx, "SELECT count(*) FROM stream_messages WHERE thread_id = $1 AND answer_seq = $2",
			th.ID, in.Seq).Scan(&n))
		return n == 1
	}, 10*time.Second, time.Millisecond, "the message was never begun")
	answer, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall, Content: "So it is.",
		Metadata: thread.Meta{AnsweredThrough: in.Seq}.JSON()})
	require.NoError(t, err)
	row2 := row
	row2.ID, row2.StitchID = thread.NewID(), answer.ID
	claimed := make(chan db.Streamed, 1)
	go func() {
		rec, _, ok, err := s.Claim(ctx, row2)
		if err == nil && ok {
			claimed <- rec
		}
		close(claimed)
	}()
	close(p.gate)
	rec = <-claimed
	require.Equal(t, []string{"m2"}, rec.MessageIDs, "the delivery finishes the message being created")
	d.Text("So it")
	d.Close()
	require.NotContains(t, p.seen(), "m2: So it", "nothing written after the delivery took it")
}

// discordTarget is the outbox target of a Discord thread.
func discordTarget(t *testing.T, store *db.Store, th *thread.Thread) string {
	t.Helper()
	p, target, err := store.InputSurface(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.PlatformDiscord, p)
	return target
}

// TestStreamerLeavesOtherSurfaces: a thread answering elsewhere streams
// nothing on the platform.
func TestStreamerLeavesOtherSurfaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	p := &platform{}
	s := streamer.New(streamer.Deps{Store: store, Platform: p, Logger: logtest.New(t)})
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	a := s.Open(ctx, th, 2)
	a.Text("hello")
	a.Close()
	require.Empty(t, p.seen())
}
