// Package discord is weft's Discord adapter: a discordgo session for the
// gateway and REST API with weft's rate limiting and typed errors, message
// splitting, history, threads, gateway events handed to a Sink, and
// verification of HTTP interactions. Package discordtest holds a fake of
// Discord's REST API and gateway that the real session talks to.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
)

// DefaultIntents are the gateway intents weft needs: guilds (channels and
// threads, so State knows them, and THREAD_* events), guild messages, and
// the privileged message content, without which content arrives empty.
const DefaultIntents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentMessageContent

// Defaults for Config.
const (
	defaultHTTPTimeout = 20 * time.Second
	defaultSinkTimeout = 10 * time.Second
)

// Config configures a Client.
type Config struct {
	// Token is the bot token, with or without the "Bot " prefix.
	Token string
	// APIBaseURL replaces https://discord.com for REST and the gateway
	// lookup, e.g. a discordtest.Server's URL. Empty means Discord.
	APIBaseURL string
	// GatewayURL, when set, is used as the websocket URL instead of asking
	// GET /gateway.
	GatewayURL string
	// Intents for IDENTIFY; zero means DefaultIntents.
	Intents discordgo.Intent
	// ShardID and ShardCount select a shard; ShardCount ≤ 1 means unsharded.
	ShardID, ShardCount int
	// HTTPClient supplies the base transport and timeout; nil means a
	// private transport and a 20 s timeout.
	HTTPClient *http.Client
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
	// Sink receives gateway events; required by Start.
	Sink Sink
	// AllowedGuilds, when non-empty, is the only guilds whose events reach
	// the Sink; events from other guilds and from DMs are dropped.
	AllowedGuilds []string
	// SinkTimeout bounds each Sink call; zero means 10 s.
	SinkTimeout time.Duration
}

// Client is weft's Discord adapter around one discordgo session (one shard).
// REST methods work without Start; Start connects the gateway.
type Client struct {
	session     *discordgo.Session
	logger      *slog.Logger
	sink        Sink
	allowed     map[string]bool
	sinkTimeout time.Duration
	idle        interface{ CloseIdleConnections() }
	channels    channelCache
	// identify is shared by every shard's guard (see ForShard).
	identify *identifyLimiter
	guard    *gatewayGuard

	events *dispatcher

	mu      sync.Mutex
	started bool
	stopped bool
	// closing is stopped for the gateway handlers, which run under the
	// session's lock and so must not take mu (Stop holds mu while closing).
	closing atomic.Bool
	// done is closed by Stop, ending a reconnect loop's wait;
	// reconnecting is set while one runs.
	done         chan struct{}
	reconnecting atomic.Bool
}

// New builds a Client; it does not connect.
func New(cfg Config) (*Client, error) {
	token := strings.TrimSpace(strings.TrimPrefix(cfg.Token, "Bot "))
	if token == "" {
		return nil, errors.New("discord: new: empty token")
	}
	if cfg.ShardCount > 1 && (cfg.ShardID < 0 || cfg.ShardID >= cfg.ShardCount) {
		return nil, fmt.Errorf("discord: new: shard %d out of range for %d shards", cfg.ShardID, cfg.ShardCount)
	}
	rewrite := &rewriteTransport{gatewayURL: cfg.GatewayURL}
	if cfg.APIBaseURL != "" {
		base, err := url.Parse(cfg.APIBaseURL)
		if err != nil || base.Scheme == "" || base.Host == "" {
			return nil, fmt.Errorf("discord: new: invalid API base URL %q", cfg.APIBaseURL)
		}
		rewrite.base = base
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "discord")

	timeout := defaultHTTPTimeout
	var base http.RoundTripper
	if cfg.HTTPClient != nil {
		base = cfg.HTTPClient.Transport
		if cfg.HTTPClient.Timeout > 0 {
			timeout = cfg.HTTPClient.Timeout
		}
	}
	if base == nil {
		// A private transport, so Stop can close its idle connections.
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	rewrite.next = base

	intents := cfg.Intents
	if intents == 0 {
		intents = DefaultIntents
	}
	limiter := newIdentifyLimiter(1)
	session, guard, err := newSession("Bot "+token, &http.Client{Transport: newLimitTransport(rewrite, logger), Timeout: timeout},
		intents, cfg.ShardID, cfg.ShardCount, limiter, logger)
	if err != nil {
		return nil, err
	}
	var allowed map[string]bool
	if len(cfg.AllowedGuilds) > 0 {
		allowed = make(map[string]bool, len(cfg.AllowedGuilds))
		for _, g := range cfg.AllowedGuilds {
			allowed[g] = true
		}
	}
	c := newClient(session, guard, limiter, logger, cfg.Sink, allowed, cfg.SinkTimeout)
	if closer, ok := base.(interface{ CloseIdleConnections() }); ok {
		c.idle = closer
	}
	return c, nil
}

// newSession builds a discordgo session sending through client, which
// carries weft's rate limiting, and connecting through a gatewayGuard.
func newSession(token string, client *http.Client, intents discordgo.Intent, shardID, shardCount int,
	limiter *identifyLimiter, logger *slog.Logger) (*discordgo.Session, *gatewayGuard, error) {
	session, err := discordgo.New(token)
	if err != nil {
		return nil, nil, fmt.Errorf("discord: new: %w", err)
	}
	session.Client = client
	guard := newGatewayGuard(shardID, limiter, logger)
	session.Dialer = guard.dialer()
	// The transport handles 429s with context-aware waits; discordgo's own
	// retry sleeps without a context and without a cap.
	session.ShouldRetryOnRateLimit = false
	// discordgo reads ShouldReconnectOnError without a lock whenever a read
	// or heartbeat fails, so it cannot be turned off safely at Stop: it is
	// off from the start, and the Client reconnects itself (reconnect).
	session.ShouldReconnectOnError = false
	session.Identify.Intents = intents
	session.ShardID, session.ShardCount = shardID, max(shardCount, 1)
	// Handlers run on the gateway read loop, in gateway order; they only
	// enqueue (see dispatcher), so they never hold the loop up.
	session.SyncEvents = true
	return session, guard, nil
}

// newClient wraps a session; with a sink it registers the gateway handlers.
func newClient(session *discordgo.Session, guard *gatewayGuard, limiter *identifyLimiter, logger *slog.Logger, sink Sink,
	allowed map[string]bool, sinkTimeout time.Duration) *Client {
	c := &Client{
		session:     session,
		guard:       guard,
		identify:    limiter,
		logger:      logger,
		sink:        sink,
		allowed:     allowed,
		sinkTimeout: sinkTimeout,
		done:        make(chan struct{}),
	}
	if c.sinkTimeout <= 0 {
		c.sinkTimeout = defaultSinkTimeout
	}
	// Registered once here, not in Start, so a retried Start does not add
	// them twice. Nothing runs until the gateway is open.
	c.events = newDispatcher(logger)
	if c.sink != nil {
		c.addHandlers()
	}
	return c
}

// Start connects the gateway and starts handing events to the Sink; it
// returns once READY has arrived. discordgo's Open takes no context: the
// gateway lookup is bounded by the HTTP timeout and the handshake by the
// websocket's. Start is idempotent.
func (c *Client) Start(ctx context.Context) error {
	if c.sink == nil {
		return errors.New("discord: start: no sink configured")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.stopped {
		return nil
	}
	if err := c.session.Open(); err != nil {
		return translate("open gateway", err)
	}
	c.started = true
	c.logger.InfoContext(ctx, "discord gateway connected")
	return nil
}

// reconnect opens the gateway again after discordgo closed it on a failed
// read or heartbeat, or on Discord's request: at once, then after waits
// doubling from 1 s to 10 min, as discordgo's own loop does, until it opens
// or Stop. Open resumes the session when it can. One loop runs at a time.
func (c *Client) reconnect() {
	if !c.reconnecting.CompareAndSwap(false, true) {
		return
	}
	defer c.reconnecting.Store(false)
	for wait := time.Second; !c.closing.Load(); wait = min(2*wait, 10*time.Minute) {
		err := c.session.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			return
		}
		c.logger.Warn("discord gateway reconnect failed", slog.Any("error", err), slog.Duration("retry_in", wait))
		select {
		case <-c.done:
			return
		case <-time.After(wait):
		}
	}
}

// Stop closes the gateway, waits (within ctx) for events already handed to
// the Sink, and closes idle HTTP connections. Stop is idempotent; the Client
// cannot be started again.
func (c *Client) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	c.closing.Store(true)
	close(c.done)
	var err error
	if c.started {
		if closeErr := c.session.Close(); closeErr != nil {
			err = fmt.Errorf("discord: stop: %w", closeErr)
		}
	}
	c.guard.close()
	if waitErr := c.events.stop(ctx); waitErr != nil {
		err = errors.Join(err, fmt.Errorf("discord: stop: %w", waitErr))
	}
	if c.idle != nil {
		c.idle.CloseIdleConnections()
	}
	return err
}

// opts are the request options for one call under ctx.
func opts(ctx context.Context) []discordgo.RequestOption {
	return []discordgo.RequestOption{discordgo.WithContext(ctx)}
}
