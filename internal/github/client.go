package github

import (
	"cmp"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	gh "github.com/google/go-github/v93/github"

	"github.com/weft-dev/weft/internal/surface"
)

// DefaultAPIURL is GitHub.com's REST API; GitHub Enterprise Server's is
// https://HOST/api/v3.
const DefaultAPIURL = "https://api.github.com"

// defaultHTTPTimeout bounds one REST call when Deps gives no client.
const defaultHTTPTimeout = 30 * time.Second

// Deps is what a Client is built from.
type Deps struct {
	// AppID is the GitHub App's id, the app JWT's issuer.
	AppID int64
	// PrivateKey is the app's private key, PEM (PKCS#1 or PKCS#8), as
	// GitHub hands it out.
	PrivateKey []byte
	// WebhookSecret is the secret X-Hub-Signature-256 is made with.
	WebhookSecret []byte
	// Slug is the app's slug: people mention @Slug, and its bot user is
	// "Slug[bot]".
	Slug string
	// APIURL is GITHUB_API_URL; empty means DefaultAPIURL.
	APIURL string
	// HTTPClient makes the calls; nil means one with a 30 s timeout.
	HTTPClient *http.Client
	// Logger logs token mints and rate limits; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Client calls GitHub as the app and as each of its installations. It is
// safe for concurrent use.
type Client struct {
	appID   int64
	key     *rsa.PrivateKey
	secret  []byte
	slug    string
	mention mention
	baseURL *url.URL
	hc      *http.Client
	logger  *slog.Logger
	now     func() time.Time
	app     *gh.Client // authenticated with the app JWT

	mu    sync.Mutex
	insts map[int64]*installation
}

// installation is one installation's token and API client. go-github
// tracks the rate limits each *gh.Client has seen and refuses, without a
// request, a call made while one is in force: one client per installation
// is what keeps a limited installation from being hammered while the
// others go on.
type installation struct {
	id     int64
	client *gh.Client

	mu      sync.Mutex // held while minting, so one mint serves all callers
	token   string
	expires time.Time
}

// New builds a Client. It fails when the key does not parse or the API
// URL is not a URL.
func New(d Deps) (*Client, error) {
	if d.AppID <= 0 {
		return nil, errors.New("github: app id is required")
	}
	if d.Slug == "" {
		return nil, errors.New("github: app slug is required")
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(d.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("github: private key: %w", err)
	}
	base, err := url.Parse(strings.TrimSuffix(cmp.Or(d.APIURL, DefaultAPIURL), "/") + "/")
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("github: api url %q: not an http(s) url", d.APIURL)
	}
	hc := d.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultHTTPTimeout}
	}
	c := &Client{
		appID: d.AppID, key: key, secret: d.WebhookSecret, slug: d.Slug, mention: mentionOf(d.Slug), baseURL: base, hc: hc,
		logger: d.Logger, now: d.Now, insts: map[int64]*installation{},
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.app, err = c.newGH(roundTripper(func(r *http.Request) (*http.Response, error) {
		tok, err := c.appJWT()
		if err != nil {
			return nil, &tokenError{err}
		}
		return c.send(r, "Bearer "+tok)
	}))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Slug is the app's slug.
func (c *Client) Slug() string { return c.slug }

// BotLogin is the login of the app's bot user, which posts its comments.
func (c *Client) BotLogin() string { return c.slug + "[bot]" }

// newGH is a go-github client on GITHUB_API_URL whose requests go through rt.
func (c *Client) newGH(rt http.RoundTripper) (*gh.Client, error) {
	hc := *c.hc
	hc.Transport = rt
	base := c.baseURL.String()
	g, err := gh.NewClient(gh.WithHTTPClient(&hc), gh.WithURLs(&base, &base), gh.WithUserAgent("weft"))
	if err != nil {
		return nil, fmt.Errorf("github: client: %w", err)
	}
	return g, nil
}

// send makes r on the underlying transport with authorization auth,
// leaving the caller's request untouched as RoundTrippers must.
func (c *Client) send(r *http.Request, auth string) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", auth)
	base := c.hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// inst is installation id's client, made on first use.
func (c *Client) inst(id int64) (*installation, error) {
	if id <= 0 {
		return nil, &surface.Error{Platform: platform, Op: "installation", Kind: surface.KindInvalid,
			Err: errors.New("installation id is required")}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in, ok := c.insts[id]; ok {
		return in, nil
	}
	in := &installation{id: id}
	g, err := c.newGH(roundTripper(func(r *http.Request) (*http.Response, error) {
		tok, err := c.installationToken(r.Context(), in)
		if err != nil {
			return nil, &tokenError{err}
		}
		resp, err := c.send(r, "token "+tok)
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			// Revoked or expired early (the app's key was rotated):
			// mint anew next time rather than fail until expiry.
			in.forget(tok)
		}
		return resp, err
	}))
	if err != nil {
		return nil, err
	}
	in.client = g
	c.insts[id] = in
	return in, nil
}

// roundTripper adapts a function to http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
