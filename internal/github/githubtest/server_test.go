package githubtest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weft-dev/weft/internal/github/githubtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// post makes a request to the fake with authorization auth.
func post(t *testing.T, s *githubtest.Server, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestAppJWT: the fake mints installation tokens only for a JWT GitHub
// would take.
func TestAppJWT(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	inst := s.Install(githubtest.User{ID: 1, Login: "acme", Type: "Organization"}, "acme/widgets")
	key, err := jwt.ParseRSAPrivateKeyFromPEM(s.PrivateKeyPEM())
	require.NoError(t, err)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	now := time.Now()
	sign := func(m jwt.SigningMethod, k any, claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(m, claims).SignedString(k)
		require.NoError(t, err)
		return tok
	}
	claims := func(iat, exp time.Duration, iss any) jwt.MapClaims {
		return jwt.MapClaims{"iat": now.Add(iat).Unix(), "exp": now.Add(exp).Unix(), "iss": iss}
	}
	path := "/app/installations/" + jsonNum(inst) + "/access_tokens"
	for _, tc := range []struct {
		name   string
		jwt    string
		status int
	}{
		{"good", sign(jwt.SigningMethodRS256, key, claims(-time.Minute, 9*time.Minute, "424242")), http.StatusCreated},
		{"numeric iss", sign(jwt.SigningMethodRS256, key, claims(-time.Minute, 9*time.Minute, 424242)), http.StatusCreated},
		{"another key", sign(jwt.SigningMethodRS256, other, claims(-time.Minute, 9*time.Minute, "424242")), http.StatusUnauthorized},
		{"HS256 with the public key's bytes", sign(jwt.SigningMethodHS256, s.PrivateKeyPEM(), claims(-time.Minute, 9*time.Minute, "424242")), http.StatusUnauthorized},
		{"none", sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(-time.Minute, 9*time.Minute, "424242")), http.StatusUnauthorized},
		{"expired", sign(jwt.SigningMethodRS256, key, claims(-12*time.Minute, -time.Minute, "424242")), http.StatusUnauthorized},
		{"longer than ten minutes", sign(jwt.SigningMethodRS256, key, claims(-time.Minute, 11*time.Minute, "424242")), http.StatusUnauthorized},
		{"issued in the future", sign(jwt.SigningMethodRS256, key, claims(time.Minute, 9*time.Minute, "424242")), http.StatusUnauthorized},
		{"another app", sign(jwt.SigningMethodRS256, key, claims(-time.Minute, 9*time.Minute, "1")), http.StatusUnauthorized},
		{"no exp", sign(jwt.SigningMethodRS256, key, jwt.MapClaims{"iat": now.Unix(), "iss": "424242"}), http.StatusUnauthorized},
		{"garbage", "not.a.jwt", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := post(t, s, "POST", path, "Bearer "+tc.jwt, "{}")
			require.Equal(t, tc.status, status, body)
			if status == http.StatusCreated {
				require.True(t, strings.HasPrefix(body["token"].(string), "ghs_"))
				exp, err := time.Parse(time.RFC3339, body["expires_at"].(string))
				require.NoError(t, err)
				require.WithinDuration(t, now.Add(time.Hour), exp, time.Minute)
			}
		})
	}
}

// TestTokensExpire: an installation token answers until its hour is up,
// then GitHub's 401 Bad credentials.
func TestTokensExpire(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	inst := s.Install(githubtest.User{ID: 1, Login: "acme", Type: "Organization"}, "acme/widgets")
	s.AddIssue("acme/widgets", githubtest.User{ID: 2, Login: "alice", Type: "User"}, "t", "", false)
	key, err := jwt.ParseRSAPrivateKeyFromPEM(s.PrivateKeyPEM())
	require.NoError(t, err)
	j, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iat": time.Now().Add(-time.Minute).Unix(),
		"exp": time.Now().Add(5 * time.Minute).Unix(), "iss": "424242"}).SignedString(key)
	require.NoError(t, err)
	status, body := post(t, s, "POST", "/app/installations/"+jsonNum(inst)+"/access_tokens", "Bearer "+j, "{}")
	require.Equal(t, http.StatusCreated, status)
	tok := "token " + body["token"].(string)
	status, _ = post(t, s, "GET", "/repos/acme/widgets/issues/1", tok, "")
	require.Equal(t, http.StatusOK, status)
	// An installation token is not an app JWT.
	status, _ = post(t, s, "POST", "/app/installations/"+jsonNum(inst)+"/access_tokens", tok, "{}")
	require.Equal(t, http.StatusUnauthorized, status)
	s.Advance(59 * time.Minute)
	status, _ = post(t, s, "GET", "/repos/acme/widgets/issues/1", tok, "")
	require.Equal(t, http.StatusOK, status)
	s.Advance(time.Minute)
	status, body = post(t, s, "GET", "/repos/acme/widgets/issues/1", tok, "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "Bad credentials", body["message"])
	// Endpoints weft does not call are not there.
	s.SkipOpenAPICheck()
	status, _ = post(t, s, "DELETE", "/repos/acme/widgets/issues/1", tok, "")
	require.Equal(t, http.StatusNotFound, status)
}

// TestRedelivery: a redelivery carries the same X-GitHub-Delivery and
// body, signed afresh.
func TestRedelivery(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	var got []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, bodies = append(got, r), append(bodies, string(b))
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	s.DeliverTo(srv.URL)
	d := s.Deliver("ping", map[string]any{"zen": "Keep it logically awesome."})
	require.NoError(t, d.Err)
	require.Equal(t, http.StatusAccepted, d.Status)
	r := s.Redeliver(d.ID)
	require.True(t, r.Redelivery)
	require.Len(t, got, 2)
	require.Equal(t, got[0].Header.Get("X-GitHub-Delivery"), got[1].Header.Get("X-GitHub-Delivery"))
	require.Equal(t, d.ID, got[1].Header.Get("X-GitHub-Delivery"))
	require.Equal(t, bodies[0], bodies[1])
	require.Equal(t, got[0].Header.Get("X-Hub-Signature-256"), got[1].Header.Get("X-Hub-Signature-256"))
	require.Equal(t, "ping", got[1].Header.Get("X-GitHub-Event"))
	require.Len(t, s.Deliveries().All(), 2)
}

func jsonNum(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// recorder is a test that records its failures instead of failing.
type recorder struct {
	*testing.T
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestOpenAPICheck: a request GitHub's REST description does not allow
// fails the test that made it and is refused; a documented one passes.
func TestOpenAPICheck(t *testing.T) {
	t.Parallel()
	rec := &recorder{T: t}
	s := githubtest.NewServer(rec)
	s.Install(githubtest.User{ID: 1, Login: "acme", Type: "Organization"}, "acme/widgets")
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/repos/acme/widgets/issues/1/timeline", "", http.StatusNotFound},
		{"POST", "/repos/acme/widgets/issues/1/comments", "{}", http.StatusUnprocessableEntity},
		{"GET", "/repos/acme/widgets/issues/1/comments?direction=desc", "", http.StatusUnprocessableEntity},
	} {
		status, _ := post(t, s, c.method, c.path, "token nope", c.body)
		require.Equal(t, c.status, status, "%s %s", c.method, c.path)
	}
	require.Len(t, rec.errors, 3)
	require.Contains(t, rec.errors[0], "is not in GitHub's REST description")
	status, _ := post(t, s, "GET", "/repos/acme/widgets/issues/1", "token nope", "")
	require.Equal(t, http.StatusUnauthorized, status, "a documented request goes on to be authenticated")
	require.Len(t, rec.errors, 3)
}
