// Package slack is weft's Slack adapter: a slack-go Web API client with
// weft's typed errors, read retries, per-channel post pacing and posts that
// carry their outbox id, plus the doors' request verification and event
// parsing. Package slacktest holds a fake of Slack's Web API, Events API and
// Socket Mode that the real client talks to.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	goslack "github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// Defaults for Config.
const (
	defaultHTTPTimeout  = 20 * time.Second
	defaultPostInterval = time.Second
	// defaultHistoryPerMinute is Slack's Tier 3, which the history methods
	// keep for an app a team creates for itself.
	defaultHistoryPerMinute = 50
	// readAttempts is a read's first try and up to 3 retries.
	readAttempts = 4
)

// defaultBackoff spaces read retries: 1 s, 2 s, 4 s (get-thread-replies.md's
// baseDelayMs=1000), plus up to half again at random.
var defaultBackoff = retry.Backoff{Base: time.Second, Max: 4 * time.Second, Jitter: 0.5}

// Config configures a Client.
type Config struct {
	// Token is the bot token (xoxb-…).
	Token string
	// AppToken is the app-level token (xapp-…) Socket Mode connects with;
	// empty leaves Socket Mode off.
	AppToken string
	// APIURL replaces https://slack.com/api/, e.g. a slacktest.Server's
	// APIURL. A missing trailing slash is added (slack-go concatenates).
	APIURL string
	// HTTPClient supplies the transport and timeout; nil means a 20 s
	// timeout (slack-go's default client has none).
	HTTPClient *http.Client
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
	// PostInterval is the least time between two posts to one channel;
	// zero means 1 s, Slack's documented pace for chat.postMessage.
	PostInterval time.Duration
	// Backoff spaces read retries; zero means 1 s doubling to 4 s.
	Backoff retry.Backoff
	// Sleep replaces the wait between read retries (tests); nil sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// HistoryPerMinute paces conversations.history and .replies, which
	// Slack limits per workspace: the calls one client makes in a minute,
	// a minute's worth allowed at once. Zero means 50, Slack's Tier 3; an
	// app distributed outside the Marketplace gets 1.
	HistoryPerMinute int
}

// Client is weft's Slack Web API client for one workspace's bot token.
// Safe for concurrent use.
type Client struct {
	api          *goslack.Client
	logger       *slog.Logger
	postInterval time.Duration
	policy       retry.Policy

	// historyReads paces conversations.history and .replies.
	historyReads *rate.Limiter
	// streams paces the streaming methods and chat.update.
	streams streamLimits

	mu       sync.Mutex
	nextPost map[string]time.Time // per channel: earliest time of the next post
	identity *Identity

	// names are the workspace's people's names by user id (UserName).
	names ttlcache.Cache[string]
}

// New returns a Client. It makes no request.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, fmt.Errorf("slack: no bot token")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultHTTPTimeout}
	}
	opts := []goslack.Option{goslack.OptionHTTPClient(hc)}
	if cfg.AppToken != "" {
		opts = append(opts, goslack.OptionAppLevelToken(cfg.AppToken))
	}
	if u := apiURL(cfg.APIURL); u != "" {
		opts = append(opts, goslack.OptionAPIURL(u))
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	interval := cfg.PostInterval
	if interval <= 0 {
		interval = defaultPostInterval
	}
	backoff := cfg.Backoff
	if backoff == (retry.Backoff{}) {
		backoff = defaultBackoff
	}
	perMinute := cfg.HistoryPerMinute
	if perMinute <= 0 {
		perMinute = defaultHistoryPerMinute
	}
	c := &Client{
		api:          goslack.New(cfg.Token, opts...),
		logger:       logger,
		postInterval: interval,
		historyReads: rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute),
		nextPost:     make(map[string]time.Time),
		streams:      newStreamLimits(),
	}
	c.policy = retry.Policy{
		Attempts:  readAttempts,
		Backoff:   backoff,
		Retryable: retryable,
		Sleep:     cfg.Sleep,
		OnRetry: func(attempt int, wait time.Duration, err error) {
			logger.Warn("slack call failed, retrying", slog.Int("attempt", attempt), slog.Duration("wait", wait), slog.Any("error", err))
		},
	}
	return c, nil
}

// apiURL is a Web API base URL as slack-go concatenates it: with its
// trailing slash; "" for Slack's own.
func apiURL(u string) string {
	if u != "" && !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// API is the underlying slack-go client, for methods this package does not
// wrap. Its calls get no typed errors, retries or pacing.
func (c *Client) API() *goslack.Client { return c.api }

// Identity is who the bot token belongs to, from auth.test.
type Identity struct {
	TeamID       string
	Team         string
	EnterpriseID string
	UserID       string // the bot user (U…), as messages' user
	BotID        string // the bot (B…), as messages' bot_id
	URL          string
}

// AuthTest asks Slack who the token is. Auth errors are KindAuth; the rest
// is retried like a read.
func (c *Client) AuthTest(ctx context.Context) (Identity, error) {
	r, err := read(ctx, c, "auth.test", func(ctx context.Context) (*goslack.AuthTestResponse, error) {
		return c.api.AuthTestContext(ctx)
	})
	if err != nil {
		return Identity{}, err
	}
	return Identity{TeamID: r.TeamID, Team: r.Team, EnterpriseID: r.EnterpriseID, UserID: r.UserID, BotID: r.BotID, URL: r.URL}, nil
}

// Identity is AuthTest's answer, asked once and then remembered (a
// token's identity does not change).
func (c *Client) Identity(ctx context.Context) (Identity, error) {
	c.mu.Lock()
	if id := c.identity; id != nil {
		c.mu.Unlock()
		return *id, nil
	}
	c.mu.Unlock()
	id, err := c.AuthTest(ctx)
	if err != nil {
		return Identity{}, err
	}
	c.mu.Lock()
	c.identity = &id
	c.mu.Unlock()
	return id, nil
}

// read runs a read-only call with weft's retry policy: server and network
// failures up to 3 more times with backoff; rate limits, auth and the rest
// come back at once, typed.
func read[T any](ctx context.Context, c *Client, op string, call func(context.Context) (T, error)) (T, error) {
	return retry.Do(ctx, c.policy, func(ctx context.Context) (T, error) {
		v, err := call(ctx)
		return v, translate(op, err)
	})
}

// paceHistory waits for the history methods' budget. A caller whose
// deadline comes first is told at once, as Slack would answer, that the
// methods are rate limited, with how long until the next call may go.
func (c *Client) paceHistory(ctx context.Context, op string) error {
	r := c.historyReads.Reserve()
	wait := r.Delay()
	if wait == 0 {
		return nil
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		r.Cancel()
		return &surface.Error{Platform: platform, Kind: surface.KindRateLimited, Op: op, Status: http.StatusTooManyRequests, RetryAfter: wait,
			Err: errors.New("weft's own pacing of Slack's history methods")}
	}
	if err := retry.Sleep(ctx, wait); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// SetStatus sets the "is thinking…" line under a thread
// (assistant.threads.setStatus); an empty status clears it. Slack clears it
// by itself when the bot posts in the thread, or after two minutes.
func (c *Client) SetStatus(ctx context.Context, channel, threadTS, status string) error {
	_, err := read(ctx, c, "assistant.threads.setStatus", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.SetAssistantThreadsStatusContext(ctx, goslack.AssistantThreadsSetStatusParameters{
			ChannelID: channel, ThreadTS: threadTS, Status: status,
		})
	})
	return err
}
