package discord

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
)

// After an Invalid Session, Discord asks for a random 1–5 s wait before
// identifying again; discordgo identified at once, and an op 9 answering
// every Identify became a storm of them. The wait is injected; the fake
// measures it.
func TestInvalidSessionWaitsBeforeIdentifying(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const wait = 300 * time.Millisecond
	b.client.guard.invalidWait = func() time.Duration { return wait }
	b.client.identify.interval = 0
	b.server.InvalidateIdentifies(2)
	b.start(t)

	ids, invalid := b.server.Identifies(), b.server.InvalidSessions()
	require.Len(t, ids, 3, "two refused, then READY")
	require.Len(t, invalid, 2)
	for i, at := range invalid {
		require.GreaterOrEqual(t, ids[i+1].At.Sub(at), wait, "identify %d came %s after the Invalid Session", i+1, ids[i+1].At.Sub(at))
	}
}

func TestInvalidSessionWaitIsOneToFiveSeconds(t *testing.T) {
	t.Parallel()
	for range 1000 {
		d := invalidSessionWait()
		require.GreaterOrEqual(t, d, time.Second)
		require.Less(t, d, 5*time.Second)
	}
}

// Two shards started together share the bot's identify limit: with
// max_concurrency 1, the second Identify's turn comes an interval after the
// first's. The first may reach the fake late (scheduling), so the second's
// arrival is measured from before either started, which its turn cannot
// precede.
func TestShardsShareTheIdentifyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const interval = 300 * time.Millisecond
	b.client.identify.interval = interval
	sinks := []*recordingSink{newRecordingSink(), newRecordingSink()}
	var shards []*Client
	for i, sink := range sinks {
		shard, err := b.client.ForShard(i, len(sinks), sink)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, shard.Stop(context.Background())) })
		shards = append(shards, shard)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, shard := range shards {
		wg.Go(func() { require.NoError(t, shard.Start(t.Context())) })
	}
	wg.Wait()
	for _, sink := range sinks {
		receive(t, sink.connected)
	}

	ids := b.server.Identifies()
	require.Len(t, ids, 2)
	slices.SortFunc(ids, func(a, b discordtest.Identify) int { return a.At.Compare(b.At) })
	require.GreaterOrEqual(t, ids[1].At.Sub(start), interval)
}

func TestIdentifyLimiterBuckets(t *testing.T) {
	t.Parallel()
	l := newIdentifyLimiter(2)
	l.interval = time.Hour
	require.NoError(t, l.wait(t.Context(), 0))
	require.NoError(t, l.wait(t.Context(), 1), "another bucket does not wait")
	done, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, l.wait(done, 2), context.Canceled, "shard 2 is in shard 0's bucket: it must wait")
	require.ErrorIs(t, l.wait(done, 3), context.Canceled, "and shard 3 in shard 1's")
}

// A zombie connection (heartbeats sent, no ACK) is closed at the first
// heartbeat whose predecessor went unanswered, with a code that keeps the
// session, and resumed on READY's resume_gateway_url.
func TestZombieConnectionIsResumed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	// Short enough for a quick test, long enough that an ACK delayed by a
	// loaded machine rarely looks like a zombie; if one does, it is handled
	// the same way, which the assertions allow.
	b.server.SetHeartbeatInterval(250 * time.Millisecond)
	b.start(t)
	b.server.StallHeartbeats()
	receive(t, b.sink.connected)

	require.Len(t, b.server.Identifies(), 1, "no new session")
	resumes := b.server.ResumeLog()
	require.NotEmpty(t, resumes)
	for _, r := range resumes {
		require.True(t, r.Accepted, "the session was kept")
		require.Equal(t, b.server.ResumePath(), r.Path, "resumed on resume_gateway_url")
	}
	closes := b.server.ClientCloses()
	require.NotEmpty(t, closes)
	for _, code := range closes {
		require.NotContains(t, []int{1000, 1001}, code, "a close that keeps the session")
	}
}

// A dropped connection resumes on READY's resume_gateway_url, not on the
// URL it connected to.
func TestResumeGoesToTheResumeURL(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.start(t)
	b.server.DropConnection(false)
	receive(t, b.sink.connected)
	resumes := b.server.ResumeLog()
	require.Len(t, resumes, 1)
	require.True(t, resumes[0].Accepted)
	require.Equal(t, b.server.ResumePath(), resumes[0].Path)
}

// discordgo dials wss://gateway.discord.gg?v=…; the guard dials the same
// over TLS, and resumes on Ready's resume_gateway_url with the same query.
func TestGuardTarget(t *testing.T) {
	t.Parallel()
	g := newGatewayGuard(0, newIdentifyLimiter(1), testLogger(t))
	r := httptest.NewRequest(http.MethodGet, "/?v=10&encoding=json", nil)
	r.Host = "gateway.discord.gg"
	target, resuming := g.target("wss", r)
	require.Equal(t, "wss://gateway.discord.gg/?v=10&encoding=json", target)
	require.False(t, resuming)
	g.setResumeURL("wss://gateway-us-east1-b.discord.gg")
	target, resuming = g.target("wss", r)
	require.Equal(t, "wss://gateway-us-east1-b.discord.gg?v=10&encoding=json", target)
	require.True(t, resuming)
}
