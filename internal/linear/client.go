package linear

//go:generate go tool genqlient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/surface"
)

// DefaultEndpoint is Linear's GraphQL endpoint.
const DefaultEndpoint = "https://api.linear.app/graphql"

// Retry defaults: a few quick attempts inside one call; anything longer is
// the outbox's job, which retries with its own schedule (its sends make
// one attempt each, retry.Once).
const (
	defaultMaxAttempts = 3
	defaultBackoff     = 250 * time.Millisecond
	defaultMaxWait     = 10 * time.Second
	defaultHTTPTimeout = 30 * time.Second
)

// Client calls Linear's GraphQL API on behalf of the agent. It is safe for
// concurrent use. Each call authenticates with the token of the workspace
// named in its context (WithOrganization), and retries rate limits and
// server errors a bounded number of times before returning an *surface.Error.
type Client struct {
	gql graphql.Client
	// files fetches uploads with the workspace's token, from uploads
	// alone.
	files       *http.Client
	uploads     Uploads
	maxAttempts int
	backoff     time.Duration
	maxWait     time.Duration
	budget      *Budget
}

// Budget is the request budget the client counts in; nil without one.
func (c *Client) Budget() *Budget { return c.budget }

// Retry is how one call retries: how many attempts it makes (at least 1),
// the base of the exponential backoff between attempts after server
// errors, and the longest wait the client accepts inside a call: a rate
// limit that resets later than MaxWait is returned at once, for the caller
// to schedule. The zero Retry is the defaults.
type Retry struct {
	MaxAttempts      int
	Backoff, MaxWait time.Duration
}

// ClientDeps is what a Client is built from.
type ClientDeps struct {
	// Endpoint is the GraphQL endpoint: DefaultEndpoint in production, a
	// lineartest server in tests.
	Endpoint string
	// HTTPClient may be nil; its Transport is wrapped, not modified, to add
	// the bearer token that Tokens returns for each call's workspace.
	HTTPClient *http.Client
	// Tokens reads each workspace's token; nil fails every call with
	// surface.KindAuth.
	Tokens TokenSource
	Retry  Retry
	// Budget counts every request sent, per workspace; nil counts none.
	Budget *Budget
}

// NewClient returns a client for d.Endpoint.
func NewClient(d ClientDeps) *Client {
	httpClient, tokens := d.HTTPClient, d.Tokens
	if tokens == nil {
		tokens = StaticToken("")
	}
	hc := &http.Client{Timeout: defaultHTTPTimeout}
	if httpClient != nil {
		copied := *httpClient
		hc = &copied
	}
	base := hc.Transport
	if base == nil {
		// net/http's default keeps 2 idle connections per host: past two
		// calls at once, each call that ends closes its connection and the
		// next dials anew (a profile of weft serve at 500 sessions/s spent
		// 7% of its CPU dialling).
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = idleConnsPerHost, idleConnsPerHost
		base = t
	}
	if d.Budget != nil {
		base = &budgetTransport{base: base, budget: d.Budget}
	}
	hc.Transport = &authTransport{base: base, tokens: tokens}
	files := *hc
	c := &Client{
		budget:      d.Budget,
		gql:         graphql.NewClient(d.Endpoint, exchangeDoer{hc}),
		files:       &files,
		uploads:     NewUploads(d.Endpoint),
		maxAttempts: defaultMaxAttempts,
		backoff:     defaultBackoff,
		maxWait:     defaultMaxWait,
	}
	// A redirect must not carry the token to another host.
	c.files.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 || !c.uploads.Has(req.URL) {
			return fmt.Errorf("linear: redirect to %s refused", req.URL.Host)
		}
		return nil
	}
	if r := d.Retry; r != (Retry{}) {
		c.maxAttempts, c.backoff, c.maxWait = max(r.MaxAttempts, 1), r.Backoff, r.MaxWait
	}
	return c
}

// idleConnsPerHost is how many idle connections to Linear's API a client
// keeps.
const idleConnsPerHost = 64

type exchangeKey struct{}

// exchangeDoer stores the headers of each response in the *exchange found
// in the request's context (see exchange).
type exchangeDoer struct{ hc *http.Client }

func (d exchangeDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok && resp != nil {
		ex.header = resp.Header
	}
	return resp, err
}

// do runs one generated call with retries: rate limits after Linear's
// reset, server errors after a backoff of base·2^(attempt-1) plus up to
// half again. op names the call in errors.
func (c *Client) do(ctx context.Context, op string, call func(ctx context.Context) error) error {
	_, err := retry.Do(ctx, retry.Policy{
		Attempts: c.maxAttempts,
		Backoff:  retry.Backoff{Base: c.backoff, Jitter: 0.5},
		// A wait longer than allowed, or than the caller's deadline, is
		// left to the caller: it can schedule the retry itself.
		MaxWait: c.maxWait,
		Retryable: func(err error) bool {
			var e *surface.Error
			return errors.As(err, &e) && e.Retryable()
		},
	}, func(ctx context.Context) (struct{}, error) {
		ex := &exchange{}
		return struct{}{}, checkResponse(ctx, op, call(context.WithValue(ctx, exchangeKey{}, ex)), ex, time.Now())
	})
	if errors.Is(err, retry.ErrInterrupted) {
		return fmt.Errorf("linear: %s: %w", op, err)
	}
	return err
}
