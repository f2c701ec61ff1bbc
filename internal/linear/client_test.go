package linear_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface"
)

const testSession = "9d0c2f0e-1111-4a5b-8c9d-000000000001"

type testBundle struct {
	srv    *lineartest.Server
	client *linear.Client
}

// setup starts a fake with one session and a client whose retries wait
// milliseconds, not seconds.
func setup(t *testing.T, retry ...linear.Retry) *testBundle {
	t.Helper()
	srv := lineartest.NewServer(t)
	srv.AddSession(testSession, "")
	r := linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: 5 * time.Second}
	if len(retry) > 0 {
		r = retry[0]
	}
	return &testBundle{
		srv:    srv,
		client: linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: linear.StaticToken(lineartest.AccessToken), Retry: r}),
	}
}

func requireKind(t *testing.T, err error, kind surface.Kind) *surface.Error {
	t.Helper()
	var e *surface.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, kind, e.Kind, "error: %v", err)
	return e
}

func TestCreateActivity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   linear.Activity
		want lineartest.Activity
	}{
		{
			name: "Thought",
			in:   linear.Activity{Type: linear.ActivityThought, Body: "Looking at the issue…"},
			want: lineartest.Activity{Type: "thought", Body: "Looking at the issue…"},
		},
		{
			name: "EphemeralThought",
			in:   linear.Activity{Type: linear.ActivityThought, Body: "Thinking", Ephemeral: true},
			want: lineartest.Activity{Type: "thought", Body: "Thinking", Ephemeral: true},
		},
		{
			name: "RunningActionIsEphemeral",
			in:   linear.Activity{Type: linear.ActivityAction, Action: "Searching", Parameter: "login redirect", Ephemeral: true},
			want: lineartest.Activity{Type: "action", Action: "Searching", Parameter: "login redirect", Ephemeral: true},
		},
		{
			name: "FinishedAction",
			in:   linear.Activity{Type: linear.ActivityAction, Action: "Searched", Parameter: "login redirect", Result: "3 files"},
			want: lineartest.Activity{Type: "action", Action: "Searched", Parameter: "login redirect", Result: "3 files"},
		},
		{
			name: "Elicitation",
			in:   linear.Activity{Type: linear.ActivityElicitation, Body: "Which environment?"},
			want: lineartest.Activity{Type: "elicitation", Body: "Which environment?"},
		},
		{
			name: "ElicitationWithOptions",
			in:   linear.Activity{Type: linear.ActivityElicitation, Body: "Which repository?", Options: []string{"weft", "weft-web"}},
			want: lineartest.Activity{Type: "elicitation", Body: "Which repository?", Signal: "select", Options: []string{"weft", "weft-web"}},
		},
		{
			name: "Response",
			in:   linear.Activity{Type: linear.ActivityResponse, Body: "Fixed in https://github.com/o/r/pull/1"},
			want: lineartest.Activity{Type: "response", Body: "Fixed in https://github.com/o/r/pull/1"},
		},
		{
			name: "Error",
			in:   linear.Activity{Type: linear.ActivityError, Body: "The model is unavailable."},
			want: lineartest.Activity{Type: "error", Body: "The model is unavailable."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tt.in.ID = uuid.NewString()
			id, err := b.client.CreateActivity(t.Context(), testSession, tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.in.ID, id)

			got := b.srv.Activities(testSession)
			require.Len(t, got, 1)
			require.False(t, got[0].CreatedAt.IsZero())
			got[0].CreatedAt = time.Time{}
			tt.want.ID, tt.want.SessionID = tt.in.ID, testSession
			require.Equal(t, tt.want, got[0])
		})
	}
}

func TestCreateActivityPicksID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, err := b.client.CreateActivity(t.Context(), testSession, linear.Activity{Type: linear.ActivityThought, Body: "hi"})
	require.NoError(t, err)
	require.NoError(t, uuid.Validate(id))
	require.Equal(t, id, b.srv.Activities(testSession)[0].ID)
}

// Invalid activities are refused before anything is sent.
func TestCreateActivityInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		session string
		in      linear.Activity
	}{
		{name: "EphemeralResponse", in: linear.Activity{Type: linear.ActivityResponse, Body: "done", Ephemeral: true}},
		{name: "OptionsOnThought", in: linear.Activity{Type: linear.ActivityThought, Body: "x", Options: []string{"a"}}},
		{name: "EmptyBody", in: linear.Activity{Type: linear.ActivityResponse, Body: "  "}},
		{name: "ActionWithoutAction", in: linear.Activity{Type: linear.ActivityAction, Parameter: "p"}},
		{name: "Prompt", in: linear.Activity{Type: linear.ActivityPrompt, Body: "agents cannot"}},
		{name: "IDNotUUID", in: linear.Activity{ID: "outbox-7", Type: linear.ActivityThought, Body: "x"}},
		{name: "NoSession", session: "-", in: linear.Activity{Type: linear.ActivityThought, Body: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			session := testSession
			if tt.session == "-" {
				session = ""
			}
			_, err := b.client.CreateActivity(t.Context(), session, tt.in)
			requireKind(t, err, surface.KindInvalid)
			require.Empty(t, b.srv.Requests())
		})
	}
}

func TestCreateActivityUnknownSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.client.CreateActivity(t.Context(), uuid.NewString(), linear.Activity{Type: linear.ActivityThought, Body: "x"})
	requireKind(t, err, surface.KindNotFound)
	require.Len(t, b.srv.Requests(), 1)
}

// The outbox resends an activity whose first send it cannot confirm; the
// existing id means the first send got through.
func TestCreateActivityConflictCountsAsDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := linear.Activity{ID: uuid.NewString(), Type: linear.ActivityResponse, Body: "Done."}
	for range 2 {
		id, err := b.client.CreateActivity(t.Context(), testSession, a)
		require.NoError(t, err)
		require.Equal(t, a.ID, id)
	}
	require.Len(t, b.srv.Activities(testSession), 1)
	require.Len(t, b.srv.Requests(), 2)
}

// The client's own retry after a lost answer hits the conflict, and
// reports success.
func TestCreateActivityLostResponseRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("agentActivityCreate", 1, fakekit.Fail(http.StatusBadGateway).AfterApplying())
	a := linear.Activity{ID: uuid.NewString(), Type: linear.ActivityThought, Body: "On it."}
	id, err := b.client.CreateActivity(t.Context(), testSession, a)
	require.NoError(t, err)
	require.Equal(t, a.ID, id)
	require.Len(t, b.srv.Activities(testSession), 1)
	require.Len(t, b.srv.Requests(), 2)
}

// The fake sets the requests bucket to reset in a moment and the
// complexity bucket (not exhausted) in an hour: waiting for the exhausted
// one is what lets the retry happen inside the call.
func TestRateLimitedThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("agentActivityCreate", 1, fakekit.RateLimited(20*time.Millisecond))
	_, err := b.client.CreateActivity(t.Context(), testSession, linear.Activity{Type: linear.ActivityThought, Body: "x"})
	require.NoError(t, err)
	require.Len(t, b.srv.Requests(), 2)
	require.Len(t, b.srv.Activities(testSession), 1)
}

func TestRateLimitResetBeyondMaxWaitIsReturned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("", 1, fakekit.RateLimited(time.Minute))
	_, err := b.client.Viewer(t.Context())
	e := requireKind(t, err, surface.KindRateLimited)
	require.True(t, e.Retryable())
	require.Greater(t, e.RetryAfter, 30*time.Second)
	require.LessOrEqual(t, e.RetryAfter, 2*time.Minute)
	require.Equal(t, "get viewer", e.Op)
	require.Len(t, b.srv.Requests(), 1)
}

func TestServerErrorsThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("viewer", 1, fakekit.Fail(http.StatusServiceUnavailable))
	b.srv.Fail("viewer", 1, fakekit.Fail(http.StatusInternalServerError))
	v, err := b.client.Viewer(t.Context())
	require.NoError(t, err)
	require.Equal(t, lineartest.AppUserID, v.ID)
	require.Len(t, b.srv.Requests(), 3)
}

func TestServerErrorStormGivesUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("", 5, fakekit.Fail(http.StatusBadGateway))
	_, err := b.client.Viewer(t.Context())
	e := requireKind(t, err, surface.KindServer)
	require.True(t, e.Retryable())
	require.Len(t, b.srv.Requests(), 3)
}

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fault    fakekit.Fault
		want     surface.Kind
		requests int
	}{
		{name: "Forbidden", fault: fakekit.Fault{Code: "FORBIDDEN", Message: "no access to team"}, want: surface.KindAuth, requests: 1},
		{name: "InternalErrorIsRetried", fault: fakekit.Fault{Code: "INTERNAL_SERVER_ERROR", Message: "oops"}, want: surface.KindServer, requests: 3},
		{name: "UnknownCode", fault: fakekit.Fault{Code: "SOMETHING_NEW", Message: "hm"}, want: surface.KindInvalid, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.srv.Fail("", 3, tt.fault)
			_, err := b.client.Viewer(t.Context())
			requireKind(t, err, tt.want)
			require.Len(t, b.srv.Requests(), tt.requests)
		})
	}
}

func TestAuthErrorNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	client := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: linear.StaticToken("lin_oauth_revoked"), Retry: linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: time.Second}})
	_, err := client.Viewer(t.Context())
	e := requireKind(t, err, surface.KindAuth)
	require.False(t, e.Retryable())
	require.Len(t, b.srv.Requests(), 1)
}

type tokenFunc func(ctx context.Context, org string) (string, error)

func (f tokenFunc) Token(ctx context.Context, org string) (string, error) { return f(ctx, org) }

func TestTokenSourceErrorIsAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	client := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: tokenFunc(func(context.Context, string) (string, error) {
		return "", errors.New("workspace not installed")
	})})
	_, err := client.Viewer(t.Context())
	requireKind(t, err, surface.KindAuth)
	require.ErrorContains(t, err, "workspace not installed")

	_, err = linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL()}).Viewer(t.Context())
	requireKind(t, err, surface.KindAuth)
	require.Empty(t, b.srv.Requests())
}

// Each call authenticates as the workspace in its context.
func TestTokenPerWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.AddToken("tok-b", "org-b")
	tokens := map[string]string{lineartest.OrganizationID: lineartest.AccessToken, "org-b": "tok-b"}
	client := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: tokenFunc(func(_ context.Context, org string) (string, error) {
		return tokens[org], nil
	})})
	v, err := client.Viewer(linear.WithOrganization(t.Context(), "org-b"))
	require.NoError(t, err)
	require.Equal(t, "org-b", v.OrganizationID)
	v, err = client.Viewer(linear.WithOrganization(t.Context(), lineartest.OrganizationID))
	require.NoError(t, err)
	require.Equal(t, lineartest.OrganizationID, v.OrganizationID)
	reqs := b.srv.Requests()
	require.Equal(t, "Bearer tok-b", reqs[0].Authorization)
	require.Equal(t, "Bearer "+lineartest.AccessToken, reqs[1].Authorization)
}

func TestSlowAnswerHonoursContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Fail("", 1, fakekit.Slow(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := b.client.Viewer(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, b.srv.Requests(), 1)
}

// A rate limit resetting after the caller's deadline is returned at once:
// waiting could only end in the deadline.
func TestRateLimitResetBeyondDeadlineIsReturned(t *testing.T) {
	t.Parallel()
	b := setup(t, linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: 2 * time.Hour})
	b.srv.Fail("", 1, fakekit.RateLimited(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := b.client.Viewer(ctx)
	requireKind(t, err, surface.KindRateLimited)
	require.NoError(t, ctx.Err())
	require.Len(t, b.srv.Requests(), 1)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestContextEndsWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.Fail("", 1, fakekit.RateLimited(time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel as soon as the first answer is in, i.e. while the client
	// waits for the reset.
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		defer cancel()
		return http.DefaultTransport.RoundTrip(r)
	})}
	client := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), HTTPClient: hc, Tokens: linear.StaticToken(lineartest.AccessToken), Retry: linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: 2 * time.Hour}})
	_, err := client.Viewer(ctx)
	require.ErrorIs(t, err, context.Canceled)
	requireKind(t, err, surface.KindRateLimited)
	require.Len(t, srv.Requests(), 1)
}

// TestClientCountsRequests counts every request the client sends in the
// budget of the workspace it sends for, retries included, and takes the
// remaining budget Linear reports back: a workspace another client has
// nearly spent is low at once.
func TestClientCountsRequests(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.AddSession(testSession, "")
	budget := linear.NewBudget(0)
	c := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: linear.StaticToken(lineartest.AccessToken),
		Retry: linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: 5 * time.Second}, Budget: budget})
	require.Same(t, budget, c.Budget())
	ctx := linear.WithOrganization(context.Background(), lineartest.OrganizationID)
	thought := linear.Activity{Type: linear.ActivityThought, Body: "thinking"}

	_, err := c.CreateActivity(ctx, testSession, thought)
	require.NoError(t, err)
	srv.Fail("agentActivityCreate", 1, fakekit.Fault{Status: http.StatusInternalServerError})
	_, err = c.CreateActivity(ctx, testSession, thought)
	require.NoError(t, err)
	require.Equal(t, []linear.Usage{{Organization: lineartest.OrganizationID, Hour: 3, Total: 3,
		Remaining: linear.DefaultRequestsPerHour - 3}}, budget.Usages())
	require.False(t, budget.Low(lineartest.OrganizationID))

	srv.SetRequestsRemaining(lineartest.OrganizationID, 100)
	_, err = c.CreateActivity(ctx, testSession, thought)
	require.NoError(t, err)
	require.Equal(t, 99, budget.Remaining(lineartest.OrganizationID))
	require.True(t, budget.Low(lineartest.OrganizationID))
}
