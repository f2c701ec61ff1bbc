package linear_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface"
)

func TestUpdateSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       linear.SessionUpdate
		wantURLs []lineartest.ExternalURL
		wantPlan string
		wantVars []string
	}{
		{
			name:     "ExternalURL",
			in:       linear.SessionUpdate{ExternalURL: "https://weft.example/t/1", ExternalURLLabel: "weft thread"},
			wantURLs: []lineartest.ExternalURL{{Label: "weft thread", URL: "https://weft.example/t/1"}},
			wantVars: []string{"id", "externalUrls"},
		},
		{
			name:     "DefaultLabel",
			in:       linear.SessionUpdate{ExternalURL: "https://weft.example/t/1"},
			wantURLs: []lineartest.ExternalURL{{Label: "weft", URL: "https://weft.example/t/1"}},
			wantVars: []string{"id", "externalUrls"},
		},
		{
			name: "Plan",
			in: linear.SessionUpdate{Plan: []linear.PlanStep{
				{Content: "Reproduce", Status: linear.PlanCompleted},
				{Content: "Fix", Status: linear.PlanInProgress},
			}},
			wantPlan: `[{"content":"Reproduce","status":"completed"},{"content":"Fix","status":"inProgress"}]`,
			wantVars: []string{"id", "plan"},
		},
		{
			name:     "ClearPlan",
			in:       linear.SessionUpdate{Plan: []linear.PlanStep{}},
			wantPlan: `[]`,
			wantVars: []string{"id", "plan"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			require.NoError(t, b.client.UpdateSession(t.Context(), testSession, tt.in))
			updates := b.srv.SessionUpdates()
			require.Len(t, updates, 1)
			require.Equal(t, testSession, updates[0].SessionID)
			require.Equal(t, tt.wantURLs, updates[0].ExternalURLs)
			if tt.wantPlan == "" {
				require.Nil(t, updates[0].Plan)
			} else {
				require.JSONEq(t, tt.wantPlan, string(updates[0].Plan))
			}
			// Fields not being updated are not sent, not even as null.
			var sent []string
			for k := range b.srv.Requests()[0].Variables {
				sent = append(sent, k)
			}
			require.ElementsMatch(t, tt.wantVars, sent)
		})
	}
}

func TestUpdateSessionNothingToUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	requireKind(t, b.client.UpdateSession(t.Context(), testSession, linear.SessionUpdate{}), surface.KindInvalid)
	require.Empty(t, b.srv.Requests())
}

func TestSessionActivities(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.AddActivity(testSession, lineartest.Activity{Type: "prompt", Body: "please fix the login"})
	// More than one page (50) of the agent's own activities.
	for range 55 {
		_, err := b.client.CreateActivity(t.Context(), testSession, linear.Activity{
			Type: linear.ActivityAction, Action: "Read", Parameter: "main.go", Result: "ok",
		})
		require.NoError(t, err)
	}
	_, err := b.client.CreateActivity(t.Context(), testSession, linear.Activity{Type: linear.ActivityElicitation, Body: "Which branch?"})
	require.NoError(t, err)
	b.srv.AddActivity(testSession, lineartest.Activity{Type: "prompt", Body: "Stop", Signal: "stop"})

	got, err := b.client.SessionActivities(t.Context(), testSession)
	require.NoError(t, err)
	require.Len(t, got, 58)
	require.Equal(t, linear.ActivityPrompt, got[0].Type)
	require.Equal(t, "please fix the login", got[0].Body)
	require.Equal(t, linear.SessionActivity{
		ID: got[1].ID, Type: linear.ActivityAction, Action: "Read", Parameter: "main.go", Result: "ok", CreatedAt: got[1].CreatedAt,
	}, got[1])
	require.Equal(t, linear.ActivityElicitation, got[56].Type)
	require.Equal(t, "Which branch?", got[56].Body)
	require.Equal(t, "stop", got[57].Signal)
	for i := 1; i < len(got); i++ {
		require.False(t, got[i].CreatedAt.Before(got[i-1].CreatedAt))
	}
	var pages int
	for _, r := range b.srv.Requests() {
		if r.Operation == "agentSessionActivities" {
			pages++
		}
	}
	require.Equal(t, 2, pages)
}

func TestSessionActivitiesUnknownSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.client.SessionActivities(t.Context(), uuid.NewString())
	requireKind(t, err, surface.KindNotFound)
}

func TestViewer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	v, err := b.client.Viewer(t.Context())
	require.NoError(t, err)
	require.Equal(t, &linear.Viewer{
		ID: lineartest.AppUserID, Name: "weft", OrganizationID: lineartest.OrganizationID, OrganizationName: "Test workspace",
	}, v)
	require.Equal(t, "Bearer "+lineartest.AccessToken, b.srv.Requests()[0].Authorization)
}

// Personal API keys go bare in the Authorization header.
func TestPersonalAPIKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.AddToken("lin_api_personal", lineartest.OrganizationID)
	client := linear.NewClient(linear.ClientDeps{Endpoint: b.srv.URL(), Tokens: linear.StaticToken("lin_api_personal"), Retry: linear.Retry{MaxAttempts: 1, Backoff: time.Millisecond, MaxWait: time.Second}})
	_, err := client.Viewer(t.Context())
	require.NoError(t, err)
	require.Equal(t, "lin_api_personal", b.srv.Requests()[0].Authorization)
}
