package linear_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface"
)

var testTeam = lineartest.Team{ID: "team-1", Key: "ENG", Name: "Engineering", States: []lineartest.State{
	{ID: "st-triage", Name: "Triage", Type: "triage", Position: 0},
	{ID: "st-todo", Name: "Todo", Type: "unstarted", Position: 1},
	{ID: "st-review", Name: "In Review", Type: "started", Position: 3},
	{ID: "st-progress", Name: "In Progress", Type: "started", Position: 2},
	{ID: "st-done", Name: "Done", Type: "completed", Position: 4},
	{ID: "st-canceled", Name: "Canceled", Type: "canceled", Position: 5},
}}

func seedIssue(b *testBundle, stateID string) {
	b.srv.AddTeam(testTeam)
	t0 := time.Date(2026, 1, 8, 10, 0, 0, 0, time.UTC)
	b.srv.AddIssue(lineartest.Issue{
		ID: "issue-1", Identifier: "ENG-123", Title: "Checkout breaks", Description: "Steps to reproduce…",
		URL: "https://linear.app/test/issue/ENG-123", TeamID: testTeam.ID, StateID: stateID,
		ProjectID: "proj-1", ProjectName: "Checkout flow",
		Comments: []lineartest.Comment{
			{ID: "c-2", Body: "Seen on mobile too", AuthorName: "Grace", CreatedAt: t0.Add(time.Hour), EditedAt: t0.Add(90 * time.Minute)},
			{ID: "c-1", Body: "@weft please fix", AuthorName: "Ada", CreatedAt: t0},
			{ID: "c-3", Body: "Linked PR", CreatedAt: t0.Add(2 * time.Hour)},
		},
	})
}

func TestIssue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seedIssue(b, "st-todo")
	t0 := time.Date(2026, 1, 8, 10, 0, 0, 0, time.UTC)
	for _, id := range []string{"issue-1", "ENG-123"} {
		got, err := b.client.Issue(t.Context(), id)
		require.NoError(t, err)
		for i := range got.Comments {
			got.Comments[i].CreatedAt = got.Comments[i].CreatedAt.UTC()
			if !got.Comments[i].EditedAt.IsZero() {
				got.Comments[i].EditedAt = got.Comments[i].EditedAt.UTC()
			}
		}
		require.Equal(t, &linear.Issue{
			ID: "issue-1", Identifier: "ENG-123", Title: "Checkout breaks", Description: "Steps to reproduce…",
			URL: "https://linear.app/test/issue/ENG-123", TeamID: "team-1", TeamKey: "ENG", TeamName: "Engineering",
			ProjectID: "proj-1", ProjectName: "Checkout flow", StateID: "st-todo", StateName: "Todo", StateType: "unstarted",
			Comments: []linear.Comment{
				{ID: "c-1", Body: "@weft please fix", AuthorName: "Ada", CreatedAt: t0},
				{ID: "c-2", Body: "Seen on mobile too", AuthorName: "Grace", CreatedAt: t0.Add(time.Hour), EditedAt: t0.Add(90 * time.Minute)},
				{ID: "c-3", Body: "Linked PR", CreatedAt: t0.Add(2 * time.Hour)},
			},
		}, got)
	}
}

func TestIssueNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.client.Issue(t.Context(), "ENG-404")
	e := requireKind(t, err, surface.KindNotFound)
	require.Equal(t, "get issue", e.Op)
	require.Len(t, b.srv.Requests(), 1)
}

func TestStartIssue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		state     string
		wantMoved bool
		wantState string
	}{
		{name: "UnstartedMovesToFirstStarted", state: "st-todo", wantMoved: true, wantState: "st-progress"},
		{name: "TriageMovesToFirstStarted", state: "st-triage", wantMoved: true, wantState: "st-progress"},
		{name: "AlreadyStarted", state: "st-review", wantState: "st-review"},
		{name: "Completed", state: "st-done", wantState: "st-done"},
		{name: "Canceled", state: "st-canceled", wantState: "st-canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			seedIssue(b, tt.state)
			moved, err := b.client.StartIssue(t.Context(), "ENG-123")
			require.NoError(t, err)
			require.Equal(t, tt.wantMoved, moved)
			got, _ := b.srv.Issue("issue-1")
			require.Equal(t, tt.wantState, got.StateID)
			if !tt.wantMoved {
				require.Empty(t, b.srv.IssueUpdates())
			}
		})
	}
}
