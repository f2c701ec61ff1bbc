package discord

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
)

// waitTimeout bounds every wait on an asynchronous event. A reconnect takes
// over a second because discordgo's Close sleeps one.
const waitTimeout = 15 * time.Second

// testBundle is one fake Discord and one Client pointed at it.
type testBundle struct {
	server  *discordtest.Server
	client  *Client
	sink    *recordingSink
	guildID string
	channel string
	alice   discordtest.User
}

// setup starts a fake and builds a Client for it; mutate adjusts the Config.
func setup(t testing.TB, mutate func(*Config)) *testBundle {
	t.Helper()
	logger := testLogger(t)
	server := discordtest.NewServer(t)
	sink := newRecordingSink()
	cfg := Config{Token: discordtest.Token, APIBaseURL: server.URL(), Logger: logger, Sink: sink}
	if mutate != nil {
		mutate(&cfg)
	}
	client, err := New(cfg)
	require.NoError(t, err)
	// Registered after the server's cleanup, so it runs first: the session
	// must close before the fake does, or discordgo keeps reconnecting.
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
	guild := "100000000000000001"
	return &testBundle{
		server: server, client: client, sink: sink, guildID: guild,
		channel: server.AddChannel(guild),
		alice:   discordtest.User{ID: "200000000000000001", Name: "alice"},
	}
}

// start connects the gateway and waits for the Sink's Connected.
func (b *testBundle) start(t *testing.T) {
	t.Helper()
	require.NoError(t, b.client.Start(t.Context()))
	receive(t, b.sink.connected)
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %s waiting for an event", waitTimeout)
		panic("unreachable")
	}
}

// recordingSink is a Sink that hands every call to a channel.
type recordingSink struct {
	created   chan Message
	updated   chan Message
	deleted   chan [2]string
	threads   chan Thread
	connected chan struct{}
}

func newRecordingSink() *recordingSink {
	const buffer = 1000
	return &recordingSink{
		created:   make(chan Message, buffer),
		updated:   make(chan Message, buffer),
		deleted:   make(chan [2]string, buffer),
		threads:   make(chan Thread, buffer),
		connected: make(chan struct{}, buffer),
	}
}

func (s *recordingSink) MessageCreated(_ context.Context, m Message) error {
	s.created <- m
	return nil
}

func (s *recordingSink) MessageUpdated(_ context.Context, m Message) error {
	s.updated <- m
	return nil
}

func (s *recordingSink) MessageDeleted(_ context.Context, channelID, messageID string) error {
	s.deleted <- [2]string{channelID, messageID}
	return nil
}

func (s *recordingSink) ThreadUpdated(_ context.Context, th Thread) error {
	s.threads <- th
	return nil
}

func (s *recordingSink) Connected(context.Context) error {
	s.connected <- struct{}{}
	return nil
}

var _ Sink = (*recordingSink)(nil)

// testLogger logs to t until the test's cleanups are done; later lines (a
// straggling discordgo goroutine) are dropped rather than panicking t.Log.
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(p))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}
