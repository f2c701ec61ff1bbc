package discord

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

func TestShardOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		guild  string
		shards int
		want   int
	}{
		{"41771983423143937", 1, 0},
		{"41771983423143937", 2, int((41771983423143937 >> 22) % 2)},
		{"41771983423143937", 16, int((41771983423143937 >> 22) % 16)},
		{"", 4, 0},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ShardOf(tt.guild, tt.shards), "%s/%d", tt.guild, tt.shards)
	}
}

// gatewayLog records which replica's gateway runs each shard, so a test
// can check two never ran one shard at once.
type gatewayLog struct {
	mu      sync.Mutex
	running map[int]string // shard → owner connected
	overlap bool
	starts  []string
	// gate, when set, holds every Start until it is closed, as an
	// Identify waiting its turn does.
	gate chan struct{}
}

func (l *gatewayLog) gateway(owner string, shard int) Gateway {
	return &fakeGateway{log: l, owner: owner, shard: shard}
}

type fakeGateway struct {
	log   *gatewayLog
	owner string
	shard int
}

func (g *fakeGateway) Start(context.Context) error {
	g.log.mu.Lock()
	if cur := g.log.running[g.shard]; cur != "" && cur != g.owner {
		g.log.overlap = true
	}
	g.log.running[g.shard] = g.owner
	g.log.starts = append(g.log.starts, g.owner)
	gate := g.log.gate
	g.log.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return nil
}

func (g *fakeGateway) Stop(context.Context) error {
	g.log.mu.Lock()
	defer g.log.mu.Unlock()
	if g.log.running[g.shard] == g.owner {
		delete(g.log.running, g.shard)
	}
	return nil
}

// killableLeases is the database as one replica sees it: once killed,
// every call fails, as when its process or network is gone.
type killableLeases struct {
	ShardLeases
	dead   atomic.Bool
	claims atomic.Int32
}

func (k *killableLeases) ClaimShard(ctx context.Context, shardID, shardCount int, owner string, ttl time.Duration) (bool, error) {
	k.claims.Add(1)
	if k.dead.Load() {
		return false, errors.New("connection refused")
	}
	return k.ShardLeases.ClaimShard(ctx, shardID, shardCount, owner, ttl)
}

func (k *killableLeases) ReleaseShard(ctx context.Context, shardID int, owner string) error {
	if k.dead.Load() {
		return errors.New("connection refused")
	}
	return k.ShardLeases.ReleaseShard(ctx, shardID, owner)
}

func TestElector(t *testing.T) {
	t.Parallel()
	const wait = 20 * time.Second

	setup := func(t *testing.T, shards int) (func(owner string) (*Elector, *killableLeases), *gatewayLog) {
		t.Helper()
		store := dbtest.NewStore(t)
		log := &gatewayLog{running: map[int]string{}}
		return func(owner string) (*Elector, *killableLeases) {
			leases := &killableLeases{ShardLeases: store}
			e := NewElector(ElectorConfig{
				Shards: shards, Owner: owner, Leases: leases, TTL: 800 * time.Millisecond, Renew: 50 * time.Millisecond,
				NewGateway: func(shard, _ int) (Gateway, error) { return log.gateway(owner, shard), nil },
				Logger:     testLogger(t),
			})
			t.Cleanup(func() { require.NoError(t, e.Stop(context.Background())) })
			return e, leases
		}, log
	}

	t.Run("StoppedHolderHandsOver", func(t *testing.T) {
		t.Parallel()
		newElector, log := setup(t, 1)
		a, _ := newElector("a")
		require.NoError(t, a.Start(t.Context()))
		require.Eventually(t, func() bool { return len(a.Held()) == 1 }, wait, 5*time.Millisecond)
		b, _ := newElector("b")
		require.NoError(t, b.Start(t.Context()))
		require.Empty(t, b.Held(), "the shard is a's")

		require.NoError(t, a.Stop(t.Context()))
		require.Empty(t, a.Held())
		require.Eventually(t, func() bool { return len(b.Held()) == 1 }, wait, 5*time.Millisecond)
		log.mu.Lock()
		defer log.mu.Unlock()
		require.Equal(t, []string{"a", "b"}, log.starts)
		require.False(t, log.overlap)
	})

	t.Run("DeadHolderIsReplacedWithoutOverlap", func(t *testing.T) {
		t.Parallel()
		newElector, log := setup(t, 1)
		a, aLeases := newElector("a")
		require.NoError(t, a.Start(t.Context()))
		require.Eventually(t, func() bool { return len(a.Held()) == 1 }, wait, 5*time.Millisecond)
		b, _ := newElector("b")
		require.NoError(t, b.Start(t.Context()))

		aLeases.dead.Store(true) // a can no longer renew, nor release
		require.Eventually(t, func() bool { return len(b.Held()) == 1 }, wait, 5*time.Millisecond)
		require.Empty(t, a.Held(), "a disconnected on its own")
		log.mu.Lock()
		defer log.mu.Unlock()
		require.False(t, log.overlap, "a stopped before b started")
	})

	// A Start that outlasts the lease (an Identify waiting its turn) keeps
	// renewing it, so no other replica takes the shard meanwhile.
	t.Run("SlowStartKeepsTheLease", func(t *testing.T) {
		t.Parallel()
		newElector, log := setup(t, 1)
		gate := make(chan struct{})
		log.gate = gate
		a, _ := newElector("a")
		require.NoError(t, a.Start(t.Context()))
		require.Eventually(t, func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			return len(log.starts) == 1
		}, wait, 5*time.Millisecond, "a won the shard and is starting")
		b, bLeases := newElector("b")
		require.NoError(t, b.Start(t.Context()))
		var open sync.Once
		release := func() { open.Do(func() { close(gate) }) }
		t.Cleanup(release) // before the electors' Stop, which waits for Start
		// 32 of b's claims, 50 ms apart, outlast a's 800 ms lease twice.
		require.Eventually(t, func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			return bLeases.claims.Load() >= 32 || len(log.starts) > 1
		}, wait, 5*time.Millisecond)
		log.mu.Lock()
		starts := slices.Clone(log.starts)
		log.mu.Unlock()
		require.Equal(t, []string{"a"}, starts, "b never started the shard")
		release()
		require.Eventually(t, func() bool { return len(a.Held()) == 1 }, wait, 5*time.Millisecond)
	})

	t.Run("ShardsSpreadAndEachHasOneHolder", func(t *testing.T) {
		t.Parallel()
		newElector, log := setup(t, 3)
		a, _ := newElector("a")
		b, _ := newElector("b")
		require.NoError(t, a.Start(t.Context()))
		require.NoError(t, b.Start(t.Context()))
		require.Eventually(t, func() bool { return len(a.Held())+len(b.Held()) == 3 }, wait, 5*time.Millisecond)
		log.mu.Lock()
		defer log.mu.Unlock()
		require.False(t, log.overlap)
	})
}
