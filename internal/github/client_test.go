package github_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/surface"
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	good := github.Deps{AppID: githubtest.AppID, PrivateKey: s.PrivateKeyPEM(), Slug: githubtest.AppSlug}
	for name, mut := range map[string]func(*github.Deps){
		"no app id": func(d *github.Deps) { d.AppID = 0 },
		"no slug":   func(d *github.Deps) { d.Slug = "" },
		"bad key": func(d *github.Deps) {
			d.PrivateKey = []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")
		},
		"bad api url": func(d *github.Deps) { d.APIURL = "ftp://example.com" },
	} {
		d := good
		mut(&d)
		_, err := github.New(d)
		require.Error(t, err, name)
	}
	_, err := github.New(good)
	require.NoError(t, err)
}

// TestTokenCaching: one mint serves every call until the token is close to
// expiry; then a new one is minted before the old one lapses.
func TestTokenCaching(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	n := s.AddIssue(repoFull, alice, "Broken widget", "It broke.", false)
	ctx := context.Background()
	for range 3 {
		_, err := c.GetIssue(ctx, inst, repo, n)
		require.NoError(t, err)
	}
	require.Len(t, routeCalls(s, routeToken), 1)

	// 54 minutes on, the hour-long token still has more than the margin.
	s.Advance(54 * time.Minute)
	_, err := c.GetIssue(ctx, inst, repo, n)
	require.NoError(t, err)
	require.Len(t, routeCalls(s, routeToken), 1)

	// At 56 minutes it is within five of expiring: replaced.
	s.Advance(2 * time.Minute)
	_, err = c.GetIssue(ctx, inst, repo, n)
	require.NoError(t, err)
	require.Len(t, routeCalls(s, routeToken), 2)

	// Each installation has its own token.
	inst2 := s.Install(acme, otherFull)
	m := s.AddIssue(otherFull, alice, "Other", "", false)
	_, err = c.GetIssue(ctx, inst2, other, m)
	require.NoError(t, err)
	require.Len(t, routeCalls(s, routeToken), 3)
	// A token of one installation does not reach another's repository.
	_, err = c.GetIssue(ctx, inst2, repo, n)
	require.True(t, surface.IsKind(err, surface.KindNotFound), "%v", err)
}

// TestTokenExpiredOrRevoked: a token GitHub refuses (revoked, or expired
// by a clock the client disagrees with) fails the call as auth, is
// dropped after the 401, and the next call mints a new one. A JWT made by
// a clock far behind GitHub's is refused too.
func TestTokenExpiredOrRevoked(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	n := s.AddIssue(repoFull, alice, "Broken widget", "", false)
	ctx := context.Background()
	_, err := c.GetIssue(ctx, inst, repo, n)
	require.NoError(t, err)
	s.RevokeTokens(inst)
	_, err = c.GetIssue(ctx, inst, repo, n)
	require.True(t, surface.IsKind(err, surface.KindAuth), "%v", err)
	_, err = c.GetIssue(ctx, inst, repo, n)
	require.NoError(t, err)
	require.Len(t, minted(s), 2)

	stale, err := github.New(github.Deps{AppID: githubtest.AppID, PrivateKey: s.PrivateKeyPEM(), Slug: githubtest.AppSlug,
		APIURL: s.URL(), Now: func() time.Time { return s.Now().Add(-2 * time.Hour) }})
	require.NoError(t, err)
	_, err = stale.GetIssue(ctx, inst, repo, n)
	require.True(t, surface.IsKind(err, surface.KindAuth), "%v", err)
	require.Len(t, minted(s), 2)
}

// minted are the token mints GitHub granted.
func minted(s *githubtest.Server) []githubtest.Call {
	var out []githubtest.Call
	for _, c := range routeCalls(s, routeToken) {
		if c.Status == http.StatusCreated {
			out = append(out, c)
		}
	}
	return out
}

// TestUninstalled: an installation that is gone cannot mint a token, which
// is not_found; a suspended one is forbidden.
func TestUninstalled(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	n := s.AddIssue(repoFull, alice, "x", "", false)
	ctx := context.Background()
	s.Suspend(inst, true)
	_, err := c.GetIssue(ctx, inst, repo, n)
	require.True(t, surface.IsKind(err, surface.KindForbidden), "%v", err)
	s.Suspend(inst, false)
	s.Uninstall(inst)
	_, err = c.GetIssue(ctx, inst, repo, n)
	require.True(t, surface.IsKind(err, surface.KindNotFound), "%v", err)
	_, err = c.GetIssue(ctx, 0, repo, n)
	require.True(t, surface.IsKind(err, surface.KindInvalid), "%v", err)
}

// TestRateLimits: GitHub's primary and secondary limits are typed errors
// with the wait, and honoured per installation: a limited installation
// makes no further requests until the wait is over, while another goes
// on.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("primary", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "x", "", false)
		inst2 := s.Install(acme, otherFull)
		m := s.AddIssue(otherFull, alice, "y", "", false)
		s.ExhaustRateLimit(inst, 30*time.Minute)
		_, err := c.GetIssue(ctx, inst, repo, n)
		var e *surface.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, surface.KindRateLimited, e.Kind)
		require.Equal(t, "primary", e.Detail)
		require.Equal(t, http.StatusForbidden, e.Status)
		require.InDelta(t, 30*time.Minute, e.RetryAfter, float64(time.Minute))
		require.True(t, e.Retryable())

		before := len(routeCalls(s, routeGetIssue))
		_, err = c.GetIssue(ctx, inst, repo, n)
		require.True(t, surface.IsKind(err, surface.KindRateLimited), "%v", err)
		require.Len(t, routeCalls(s, routeGetIssue), before, "a limited installation is not called again")

		_, err = c.GetIssue(ctx, inst2, other, m)
		require.NoError(t, err, "another installation goes on")
	})
	t.Run("primary used up by requests", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "x", "", false)
		s.SetRateLimit(inst, 3)
		for range 3 {
			_, err := c.GetIssue(ctx, inst, repo, n)
			require.NoError(t, err)
		}
		// The third answer said X-RateLimit-Remaining: 0; the client waits
		// for the reset without asking again.
		_, err := c.GetIssue(ctx, inst, repo, n)
		var e *surface.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, surface.KindRateLimited, e.Kind)
		require.Greater(t, e.RetryAfter, 50*time.Minute)
		require.Len(t, routeCalls(s, routeGetIssue), 3)
	})
	t.Run("secondary", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "x", "", false)
		s.Fail(routeCreateComment, 1, fakekit.RateLimited(90*time.Second))
		_, err := c.PostComment(ctx, inst, github.Post{Repo: repo, Number: n, OutboxID: "o1", Text: "hi", Fresh: true})
		var e *surface.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, surface.KindRateLimited, e.Kind)
		require.Equal(t, "secondary", e.Detail)
		require.Equal(t, 90*time.Second, e.RetryAfter)
		before := len(s.Calls())
		_, err = c.GetIssue(ctx, inst, repo, n)
		require.True(t, surface.IsKind(err, surface.KindRateLimited), "%v", err)
		require.Len(t, s.Calls(), before, "no request during a secondary limit")
	})
	t.Run("429 with Retry-After", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "x", "", false)
		s.Fail(routeGetIssue, 1, fakekit.Fault{Status: http.StatusTooManyRequests, Body: `{"message":"slow down"}`,
			Header: http.Header{"Retry-After": {"7"}, "Content-Type": {"application/json"}}})
		_, err := c.GetIssue(ctx, inst, repo, n)
		var e *surface.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, surface.KindRateLimited, e.Kind)
		require.Equal(t, 7*time.Second, e.RetryAfter)
	})
}

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault fakekit.Fault
		kind  surface.Kind
	}{
		{fakekit.Fail(http.StatusInternalServerError), surface.KindServer},
		{fakekit.Fail(http.StatusBadGateway), surface.KindServer},
		{fakekit.Fail(http.StatusNotFound), surface.KindNotFound},
		{fakekit.Fail(http.StatusGone), surface.KindNotFound},
		{fakekit.Fail(http.StatusForbidden), surface.KindForbidden},
		{fakekit.ErrorCode("Validation Failed"), surface.KindInvalid},
		{fakekit.Dropped(), surface.KindServer},
	} {
		t.Run(tc.kind.String()+"/"+http.StatusText(tc.fault.Status), func(t *testing.T) {
			t.Parallel()
			s, c, inst := setup(t)
			n := s.AddIssue(repoFull, alice, "x", "", false)
			s.Fail(routeGetIssue, 0, tc.fault) // every one: Go retries an idempotent GET once on a dropped connection
			_, err := c.GetIssue(context.Background(), inst, repo, n)
			require.True(t, surface.IsKind(err, tc.kind), "%v", err)
			require.Equal(t, tc.kind == surface.KindServer, surface.Ambiguous(err))
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		s, c, inst := setup(t)
		n := s.AddIssue(repoFull, alice, "x", "", false)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.GetIssue(ctx, inst, repo, n)
		require.True(t, errors.Is(err, context.Canceled), "%v", err)
		var e *surface.Error
		require.False(t, errors.As(err, &e))
	})
}

// TestConcurrentMint: callers racing on an installation's first call wait
// for one token.
func TestConcurrentMint(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	n := s.AddIssue(repoFull, alice, "x", "", false)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := c.GetIssue(context.Background(), inst, repo, n)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, routeCalls(s, routeToken), 1)
}

// TestEnterpriseURL: GitHub Enterprise Server's API lives under /api/v3;
// GITHUB_API_URL with that path (and a trailing slash or not) reaches it.
func TestEnterpriseURL(t *testing.T) {
	t.Parallel()
	s, _, inst := setup(t)
	n := s.AddIssue(repoFull, alice, "On GHES", "", false)
	target, err := url.Parse(s.URL())
	require.NoError(t, err)
	ghes := httptest.NewServer(http.StripPrefix("/api/v3", httputil.NewSingleHostReverseProxy(target)))
	t.Cleanup(ghes.Close)
	for _, api := range []string{ghes.URL + "/api/v3", ghes.URL + "/api/v3/"} {
		c, err := github.New(github.Deps{AppID: githubtest.AppID, PrivateKey: s.PrivateKeyPEM(), Slug: githubtest.AppSlug,
			APIURL: api, Now: s.Now})
		require.NoError(t, err)
		got, err := c.GetIssue(context.Background(), inst, repo, n)
		require.NoError(t, err)
		require.Equal(t, "On GHES", got.Title)
	}
}
