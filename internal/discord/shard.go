package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// ForShard returns a Client for one gateway shard that hands its events to
// sink. It shares c's HTTP client, and so its rate limiting: Discord's
// global limit is per bot token, however many sessions a process runs;
// so is the identify limit, which every shard's Identify waits for.
// Only the gateway is per shard; sends go through any Client.
func (c *Client) ForShard(shardID, shardCount int, sink Sink) (*Client, error) {
	if sink == nil {
		return nil, errors.New("discord: for shard: no sink")
	}
	if shardCount > 1 && (shardID < 0 || shardID >= shardCount) {
		return nil, fmt.Errorf("discord: for shard: shard %d out of range for %d shards", shardID, shardCount)
	}
	logger := c.logger.With("shard_id", shardID)
	session, guard, err := newSession(c.session.Token, c.session.Client, c.session.Identify.Intents, shardID, shardCount, c.identify, logger)
	if err != nil {
		return nil, err
	}
	return newClient(session, guard, c.identify, logger, sink, c.allowed, c.sinkTimeout), nil
}

// ShardOf is the shard a guild's events arrive on: (guild_id >> 22) %
// shard_count, per Discord's sharding formula. DMs (no guild) go to shard 0.
func ShardOf(guildID string, shardCount int) int {
	if shardCount <= 1 {
		return 0
	}
	id, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return 0
	}
	return int((id >> 22) % uint64(shardCount))
}

// ShardLeases is where replicas agree on who runs each gateway shard.
// *db.Store implements it with a lease row per shard.
type ShardLeases interface {
	// ClaimShard takes or renews owner's lease for ttl and reports whether
	// owner holds the shard now.
	ClaimShard(ctx context.Context, shardID, shardCount int, owner string, ttl time.Duration) (bool, error)
	// ReleaseShard gives the lease up, if owner holds it.
	ReleaseShard(ctx context.Context, shardID int, owner string) error
}

// Gateway is one shard's connection: a *Client with a Sink.
type Gateway interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Election defaults. A holder renews every DefaultShardRenew and gives its
// shard up when it could not renew for DefaultShardTTL minus one renewal;
// another replica, trying every DefaultShardRenew, takes a dead holder's
// shard within DefaultShardTTL + DefaultShardRenew (18 s), inside the 30 s
// weft promises.
const (
	DefaultShardTTL   = 15 * time.Second
	DefaultShardRenew = 3 * time.Second
)

// ElectorConfig configures an Elector.
type ElectorConfig struct {
	// Shards is the number of gateway shards (DISCORD_SHARD_COUNT); ≤ 1
	// means one unsharded connection.
	Shards int
	// Owner names this replica in the lease rows; it must be unique per
	// process.
	Owner  string
	Leases ShardLeases
	// NewGateway builds the connection for a shard this replica won. It is
	// called again after each loss, since a stopped Client cannot restart.
	NewGateway func(shardID, shardCount int) (Gateway, error)
	TTL        time.Duration // 0: DefaultShardTTL
	Renew      time.Duration // 0: DefaultShardRenew
	Logger     *slog.Logger
}

// Elector runs the gateway shards this replica wins. Each shard has a loop
// that tries to claim its lease every Renew; the winner connects and keeps
// renewing, the others keep trying. A holder that cannot renew (the
// database is unreachable, or another owner took the lapsed lease)
// disconnects before its lease can lapse on the database's clock, so two
// replicas never knowingly hold one shard. Should they overlap anyway (a
// stalled process), duplicate events are harmless: ingest deduplicates by
// message id.
type Elector struct {
	cfg    ElectorConfig
	logger *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	held   map[int]bool
}

// NewElector returns an Elector; Start runs it.
func NewElector(cfg ElectorConfig) *Elector {
	if cfg.Shards < 1 {
		cfg.Shards = 1
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultShardTTL
	}
	if cfg.Renew <= 0 {
		cfg.Renew = DefaultShardRenew
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{cfg: cfg, logger: logger.With("component", "discord_shards"), held: map[int]bool{}}
}

// Start begins contending for every shard. It returns at once; Stop ends
// it. Start is idempotent.
func (e *Elector) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel != nil {
		return nil
	}
	// The loops outlive ctx (a request's or start's): Stop ends them, so
	// that a shutdown can release the leases in order.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel, e.done = cancel, make(chan struct{})
	var wg sync.WaitGroup
	for shard := range e.cfg.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.contend(runCtx, shard)
		}()
	}
	go func() {
		wg.Wait()
		close(e.done)
	}()
	return nil
}

// Stop disconnects the shards held and releases their leases, so another
// replica takes over at its next attempt. ctx bounds the wait.
func (e *Elector) Stop(ctx context.Context) error {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("discord: stop shards: %w", ctx.Err())
	}
}

// Held lists the shards this replica runs now.
func (e *Elector) Held() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []int
	for s := range e.cfg.Shards {
		if e.held[s] {
			out = append(out, s)
		}
	}
	return out
}

func (e *Elector) setHeld(shard int, held bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.held[shard] = held
}

// contend is one shard's loop: claim, run while renewing, repeat.
func (e *Elector) contend(ctx context.Context, shard int) {
	log := e.logger.With("shard_id", shard)
	t := time.NewTicker(e.cfg.Renew)
	defer t.Stop()
	for {
		if e.claim(ctx, log, shard) {
			e.hold(ctx, log, shard, t)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// claim tries to take the shard's lease once.
func (e *Elector) claim(ctx context.Context, log *slog.Logger, shard int) bool {
	ok, err := e.cfg.Leases.ClaimShard(ctx, shard, e.cfg.Shards, e.cfg.Owner, e.cfg.TTL)
	if err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "discord shard claim failed", slog.Any("error", err))
	}
	return err == nil && ok
}

// hold runs the shard's gateway while this replica keeps its lease, then
// disconnects and, on a stop, releases the lease.
func (e *Elector) hold(ctx context.Context, log *slog.Logger, shard int, t *time.Ticker) {
	// The lease runs from before the claim on the database's clock, so a
	// deadline taken now, one renewal short of the TTL, ends first.
	deadline := time.Now().Add(e.cfg.TTL - e.cfg.Renew)
	gw, err := e.cfg.NewGateway(shard, e.cfg.Shards)
	if err != nil {
		log.ErrorContext(ctx, "discord shard gateway could not be built", slog.Any("error", err))
		e.release(ctx, log, shard, nil)
		return
	}
	// Start may wait its turn to identify (identifyLimiter: 5 s per shard
	// started together), longer than the lease lasts, so the lease is
	// renewed meanwhile.
	starting := make(chan error, 1)
	go func() { starting <- gw.Start(ctx) }()
	awaitStart := func() {
		if starting != nil {
			<-starting
		}
	}
	defer e.setHeld(shard, false)
	for {
		select {
		case err := <-starting:
			starting = nil
			if err != nil {
				log.ErrorContext(ctx, "discord shard could not connect", slog.Any("error", err))
				e.release(ctx, log, shard, gw)
				return
			}
			log.InfoContext(ctx, "discord shard acquired")
			e.setHeld(shard, true)
			continue
		case <-ctx.Done():
			awaitStart()
			e.release(ctx, log, shard, gw)
			log.InfoContext(ctx, "discord shard released")
			return
		case <-t.C:
		}
		started := time.Now()
		ok, err := e.cfg.Leases.ClaimShard(ctx, shard, e.cfg.Shards, e.cfg.Owner, e.cfg.TTL)
		switch {
		case err == nil && ok:
			deadline = started.Add(e.cfg.TTL - e.cfg.Renew)
			continue
		case err == nil:
			log.WarnContext(ctx, "discord shard lease taken by another replica")
		case time.Now().Before(deadline):
			log.WarnContext(ctx, "discord shard renewal failed, will retry", slog.Any("error", err))
			continue
		default:
			log.ErrorContext(ctx, "discord shard lease could not be renewed in time; disconnecting", slog.Any("error", err))
		}
		awaitStart()
		e.stopGateway(ctx, log, gw)
		return
	}
}

// release disconnects gw and gives the lease up, both past ctx's end: a
// stop must still do them.
func (e *Elector) release(ctx context.Context, log *slog.Logger, shard int, gw Gateway) {
	e.stopGateway(ctx, log, gw)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.Renew)
	defer cancel()
	if err := e.cfg.Leases.ReleaseShard(rctx, shard, e.cfg.Owner); err != nil {
		log.WarnContext(ctx, "discord shard release failed; it lapses on its own", slog.Any("error", err))
	}
}

// shardStopTimeout bounds a gateway's close and the drain of its events.
const shardStopTimeout = 10 * time.Second

func (e *Elector) stopGateway(ctx context.Context, log *slog.Logger, gw Gateway) {
	if gw == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shardStopTimeout)
	defer cancel()
	if err := gw.Stop(sctx); err != nil {
		log.WarnContext(ctx, "discord shard stop", slog.Any("error", err))
	}
}
