package lineartest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
)

type answer struct {
	status int
	body   map[string]any
}

func post(t *testing.T, srv *lineartest.Server, token, query string, vars map[string]any) answer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL(), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return answer{resp.StatusCode, out}
}

func code(a answer) string {
	errs, _ := a.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	c, _ := ext["code"].(string)
	return c
}

// Operations are validated against the schema subset before anything runs,
// the way Linear rejects them.
func TestRejectsInvalidOperations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{name: "UnknownField", query: `query { viewer { id email } }`},
		{name: "UnknownRootField", query: `query { agentSessions { nodes { id } } }`},
		{name: "SyntaxError", query: `query { viewer { id }`},
		{name: "MissingRequiredArgument", query: `query { issue { id } }`},
		{name: "MissingVariable", query: `query q($id: String!) { issue(id: $id) { id } }`},
		{name: "WrongVariableType", query: `query q($id: String!) { issue(id: $id) { id } }`, vars: map[string]any{"id": 7}},
		{name: "UnknownInputField", query: `mutation m($in: AgentActivityCreateInput!) { agentActivityCreate(input: $in) { success } }`,
			vars: map[string]any{"in": map[string]any{"agentSessionId": "s", "content": map[string]any{}, "bogus": 1}}},
		{name: "BadEnumValue", query: `mutation m($s: AgentActivitySignal) { agentActivityCreate(input: {agentSessionId: "s", content: {}, signal: $s}) { success } }`,
			vars: map[string]any{"s": "shout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := lineartest.NewServer(t)
			a := post(t, srv, lineartest.AccessToken, tt.query, tt.vars)
			require.Equal(t, http.StatusBadRequest, a.status, "%v", a.body)
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", code(a))
			require.Len(t, srv.Requests(), 1)
		})
	}
}

func TestAnswersValidOperation(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	a := post(t, srv, lineartest.AccessToken, `query { me: viewer { __typename id organization { id } } }`, nil)
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, map[string]any{"me": map[string]any{
		"__typename": "User", "id": lineartest.AppUserID, "organization": map[string]any{"id": lineartest.OrganizationID},
	}}, a.body["data"])
}

func TestRejectsUnknownToken(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	a := post(t, srv, "nope", `query { viewer { id } }`, nil)
	require.Equal(t, http.StatusUnauthorized, a.status)
	require.Equal(t, "AUTHENTICATION_ERROR", code(a))

	srv.RevokeToken(lineartest.AccessToken)
	a = post(t, srv, lineartest.AccessToken, `query { viewer { id } }`, nil)
	require.Equal(t, "AUTHENTICATION_ERROR", code(a))
}

func TestRateLimitFault(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.Fail("", 1, fakekit.RateLimited(time.Minute))
	before := time.Now()
	resp, err := http.Post(srv.URL(), "application/json", strings.NewReader(`{"query":"query { viewer { id } }"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "0", resp.Header.Get("X-RateLimit-Requests-Remaining"))
	reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Requests-Reset"), 10, 64)
	require.NoError(t, err)
	require.True(t, time.UnixMilli(reset).After(before.Add(30*time.Second)), "reset is epoch milliseconds a minute ahead")
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, "RATELIMITED", code(answer{resp.StatusCode, out}))

	// One use only: the next request goes through.
	a := post(t, srv, lineartest.AccessToken, `query { viewer { id } }`, nil)
	require.Equal(t, http.StatusOK, a.status)
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	form := url.Values{"grant_type": {"password"}, "client_id": {lineartest.ClientID}, "client_secret": {lineartest.ClientSecret}}
	resp, err := http.PostForm(srv.TokenURL(), form)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(b), "unsupported_grant_type")
}

func TestSignedDeliveryVerifies(t *testing.T) {
	t.Parallel()
	signer := lineartest.Signer{Secret: []byte("s3cret")}
	d, opts := signer.Created(lineartest.SessionOpts{})
	for _, d := range []lineartest.Delivery{d, signer.Prompted(opts, "a1", "more"), signer.Stop(opts, "a2"), signer.Revoked("org", time.Now())} {
		r := d.Request("/webhooks/linear")
		raw, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		require.NoError(t, linear.Verify(signer.Secret, raw, r.Header.Get(linear.HeaderSignature), time.Now()))
		require.NotEmpty(t, r.Header.Get(linear.HeaderDelivery))
		_, err = linear.Parse(raw)
		require.NoError(t, err)
	}
}

// TestRequestBudgetHeaders sends Linear's X-RateLimit-Requests-* headers on
// every authenticated answer, counting down per workspace, and reports a
// workspace's hour as spent down to what SetRequestsRemaining says.
func TestRequestBudgetHeaders(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	remaining := func() string {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(`{"query":"query { viewer { id } }"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+lineartest.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, strconv.Itoa(lineartest.RequestsPerHour), resp.Header.Get("X-RateLimit-Requests-Limit"))
		require.NotEmpty(t, resp.Header.Get("X-RateLimit-Requests-Reset"))
		return resp.Header.Get("X-RateLimit-Requests-Remaining")
	}
	require.Equal(t, "4999", remaining())
	require.Equal(t, "4998", remaining())
	srv.SetRequestsRemaining(lineartest.OrganizationID, 10)
	require.Equal(t, "9", remaining())
}

// TestShownReplacesEphemeral shows a session as Linear does: an ephemeral
// activity only until the agent's next one.
func TestShownReplacesEphemeral(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	const session = "s-shown"
	srv.AddActivity(session, lineartest.Activity{Type: "thought", Body: "Looking into it…", Ephemeral: true})
	srv.AddActivity(session, lineartest.Activity{Type: "thought", Body: "The redirect", Ephemeral: true})
	require.Equal(t, []string{"The redirect"}, bodies(srv.Shown(session)))
	srv.AddActivity(session, lineartest.Activity{Type: "response", Body: "The redirect drops it."})
	require.Equal(t, []string{"The redirect drops it."}, bodies(srv.Shown(session)))
	require.Len(t, lineartest.Ephemeral(srv.Activities(session)), 2, "every ephemeral activity is recorded as sent")
}

func bodies(acts []lineartest.Activity) []string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.Body
	}
	return out
}
