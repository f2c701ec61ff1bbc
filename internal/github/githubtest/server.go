// Package githubtest is a fake of GitHub for tests and demos: the REST
// endpoints weft calls (and no others), authenticated as GitHub does — an
// RS256 app JWT checked with the app's public key for minting
// installation access tokens, which expire — with GitHub's primary and
// secondary rate limits and 5xx faults in fakekit's vocabulary by route
// ("POST /repos/{owner}/{repo}/issues/{issue_number}/comments"), and
// signed webhook deliveries with redelivery. In a test, every request it
// receives is checked against GitHub's own REST description (vendored in
// openapi/), and one GitHub does not document fails the test. The real
// go-github client talks to it through its base URL. Tests add
// repositories, issues and comments, deliver events, and read back what
// the app did. Only tests and the demo may import it.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// The fake app's identity.
const (
	AppID         = 424242
	AppSlug       = "weft-test"
	BotLogin      = AppSlug + "[bot]"
	BotUserID     = 4242420
	WebhookSecret = "githubtest-webhook-secret"
	// TokenTTL is how long an installation token lasts, as on GitHub.
	TokenTTL = time.Hour
	// DefaultRateLimit is an installation's primary rate limit, requests
	// an hour: GitHub.com's least for an installation.
	DefaultRateLimit = 5000
)

// Bot is the app's bot user, who posts its comments.
var Bot = User{ID: BotUserID, Login: BotLogin, Type: "Bot"}

// User is an account in the fake.
type User struct {
	ID    int64
	Login string
	Type  string // "User", "Bot", "Organization"
}

// Call is one REST request the fake answered.
type Call struct {
	// Route is the endpoint's pattern, as faults name it.
	Route  string
	Method string
	// URL is the request's URL as received (path and query).
	URL    string
	Header http.Header
	Body   []byte
	Status int
	// Installation is the installation whose token made the call, 0 for
	// the app JWT or none.
	Installation int64
	// At is when the fake received it, and Answered when it answered,
	// on its clock.
	At, Answered time.Time
}

// Server is a fake GitHub. All methods are safe for concurrent use.
type Server struct {
	// Faults are served by route: "METHOD /pattern" as GitHub's REST
	// reference writes the path, e.g. "GET /repos/{owner}/{repo}/issues/{issue_number}".
	fakekit.Faults

	t    fakekit.TB
	http *httptest.Server
	key  *rsa.PrivateKey

	mu       sync.Mutex
	now      time.Time // the fake's clock; zero means time.Now
	ttl      time.Duration
	nextID   int64
	insts    map[int64]*installation
	tokens   map[string]token
	repos    map[string]*repo // "owner/name", lower case
	users    map[string]User
	calls    fakekit.Log[Call]
	hooks    *hooks
	pageSize int // caps per_page, so that tests reach pagination
	// checkOpenAPI checks each request against GitHub's REST description
	// (on with a test's t).
	checkOpenAPI bool
}

type installation struct {
	id        int64
	account   User
	repos     map[int64]bool
	suspended bool
	deleted   bool
	// The primary rate limit: limit requests an hour from window on,
	// used of them so far; limitedUntil forces it used up until then.
	limit, used  int
	window       time.Time
	limitedUntil time.Time
	// A secondary rate limit: every request answers secondaryStatus with
	// Retry-After until secondaryUntil.
	secondaryUntil  time.Time
	secondaryStatus int
}

type token struct {
	inst    int64
	expires time.Time
}

// appKey is the fake app's private key. Every fake of a process shares
// it: generating a 2048-bit RSA key takes up to a second of CPU, and a
// test that needs another key (a forged JWT) makes its own.
var appKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// NewServer starts a fake GitHub. With a non-nil t it
// is closed in t.Cleanup and logs there; with nil (a demo) the caller
// must Close it.
func NewServer(t fakekit.TB) *Server {
	key, err := appKey()
	if err != nil {
		panic("githubtest: generate key: " + err.Error())
	}
	s := &Server{
		t: t, key: key, ttl: TokenTTL, nextID: 1000,
		insts: map[int64]*installation{}, tokens: map[string]token{}, repos: map[string]*repo{},
		users: map[string]User{strings.ToLower(BotLogin): Bot}, pageSize: 100, checkOpenAPI: t != nil,
	}
	s.hooks = &hooks{s: s, client: &http.Client{Timeout: hookTimeout}, sent: map[string]sentHook{}}
	s.http = httptest.NewServer(s.routes())
	fakekit.CloseAtEnd(t, s.Close)
	return s
}

// Close stops the fake.
func (s *Server) Close() { s.http.Close() }

// URL is the API's base URL, GITHUB_API_URL for weft.
func (s *Server) URL() string { return s.http.URL }

// PrivateKeyPEM is the app's private key as GitHub hands it out (PKCS#1).
func (s *Server) PrivateKeyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(s.key)})
}

// Calls is every REST request so far, in order.
func (s *Server) Calls() []Call { return s.calls.All() }

// CallLog is the recorded traffic, to wait on.
func (s *Server) CallLog() *fakekit.Log[Call] { return &s.calls }

// Now is the fake's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock()
}

func (s *Server) clock() time.Time {
	if s.now.IsZero() {
		return time.Now()
	}
	return s.now
}

// Advance moves the fake's clock on by d (from the real time, the first
// time): tokens and app JWTs expire by it.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.clock().Add(d)
}

// SetPageSize caps per_page, so that tests reach pagination with few items.
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// Install installs the app on account's repositories and returns the
// installation's id. The account is added as a user if new.
func (s *Server) Install(account User, repos ...string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	in := &installation{id: s.nextID, account: account, repos: map[int64]bool{}, limit: DefaultRateLimit}
	s.users[strings.ToLower(account.Login)] = account
	for _, full := range repos {
		in.repos[s.repoLocked(full).id] = true
	}
	s.insts[in.id] = in
	return in.id
}

// Suspend suspends (or unsuspends) an installation: GitHub refuses to mint
// its tokens and its tokens stop working.
func (s *Server) Suspend(inst int64, suspended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insts[inst].suspended = suspended
}

// Uninstall deletes an installation: its tokens stop working at once.
func (s *Server) Uninstall(inst int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insts[inst].deleted = true
}

// ExhaustRateLimit uses up an installation's primary rate limit until d
// from now on the fake's clock, rounded up to a whole second as GitHub's
// X-RateLimit-Reset is: every call answers 403 with
// X-RateLimit-Remaining: 0 until then. It returns the reset.
func (s *Server) ExhaustRateLimit(inst int64, d time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	until := s.clock().Add(d + time.Second - 1).Truncate(time.Second)
	s.insts[inst].limitedUntil = until
	return until
}

// SecondaryLimit puts an installation under a secondary rate limit for d
// on the fake's clock: every call of its tokens answers status (403, as
// GitHub mostly does, or 429) with Retry-After, the seconds left, until
// then. It returns when the limit ends.
func (s *Server) SecondaryLimit(inst int64, d time.Duration, status int) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	until := s.clock().Add(d + time.Second - 1).Truncate(time.Second)
	in := s.insts[inst]
	in.secondaryUntil, in.secondaryStatus = until, status
	return until
}

// SetRateLimit sets an installation's primary rate limit, requests an
// hour (a benchmark raises it; GitHub grants up to 12,500, 15,000 on
// Enterprise Cloud).
func (s *Server) SetRateLimit(inst int64, perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insts[inst].limit = perHour
}

// Tokens is how many installation tokens were minted.
func (s *Server) Tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

// RevokeTokens revokes every token of an installation, as GitHub does
// when the app's key is rotated or the token is revoked through the API:
// they answer 401 from then on.
func (s *Server) RevokeTokens(inst int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, t := range s.tokens {
		if t.inst == inst {
			t.expires = time.Time{}
			s.tokens[tok] = t
		}
	}
}
