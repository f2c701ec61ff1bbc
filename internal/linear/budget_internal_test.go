package linear

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBudgetWindow counts per workspace over the last hour: requests older
// than an hour stop counting, and each workspace has its own budget.
func TestBudgetWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	b := NewBudget(100)
	b.now = func() time.Time { return now }
	for range 30 {
		b.Count("a")
	}
	b.Count("b")
	require.Equal(t, 70, b.Remaining("a"))
	require.Equal(t, 99, b.Remaining("b"))
	require.Equal(t, 100, b.Remaining("c"), "an unseen workspace has its whole budget")

	now = now.Add(30 * time.Minute)
	for range 55 {
		b.Count("a")
	}
	require.Equal(t, 15, b.Remaining("a"))
	require.True(t, b.Low("a"), "15 left is below the reserve of 20")
	require.False(t, b.Low("b"))

	// An hour after the first 30, only the later 55 count.
	now = now.Add(31 * time.Minute)
	require.Equal(t, 45, b.Remaining("a"))
	require.False(t, b.Low("a"))
	require.Equal(t, []Usage{
		{Organization: "a", Hour: 55, Total: 85, Remaining: 45},
		{Organization: "b", Hour: 0, Total: 1, Remaining: 100},
	}, b.Usages())
}

// TestBudgetObserve lets Linear's own headers lower the estimate, since
// they see every replica's requests, until their reset passes; they never
// raise it above this replica's count.
func TestBudgetObserve(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	b := NewBudget(5000)
	b.now = func() time.Time { return now }
	header := func(remaining int, reset time.Time) http.Header {
		h := http.Header{}
		h.Set("X-RateLimit-Requests-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Requests-Reset", strconv.FormatInt(reset.UnixMilli(), 10))
		return h
	}
	tests := []struct {
		name   string
		header http.Header
		want   int
		low    bool
	}{
		{"no headers change nothing", http.Header{}, 5000, false},
		{"Linear says less", header(800, now.Add(10*time.Minute)), 800, true},
		{"Linear says more: the own count stands", header(9000, now.Add(10*time.Minute)), 5000, false},
		{"a reset in the past is stale", header(10, now.Add(-time.Second)), 5000, false},
		{"remaining without reset is ignored", http.Header{"X-Ratelimit-Requests-Remaining": {"3"}}, 5000, false},
	}
	for _, tc := range tests {
		// Sequential: each case starts from a fresh budget.
		b.per = map[string]*usage{}
		b.Observe("org", tc.header)
		require.Equal(t, tc.want, b.Remaining("org"), tc.name)
		require.Equal(t, tc.low, b.Low("org"), tc.name)
	}
}

// TestBudgetNil is the client without a budget: nothing counted, never low.
func TestBudgetNil(t *testing.T) {
	t.Parallel()
	var b *Budget
	b.Count("a")
	b.Observe("a", http.Header{})
	require.False(t, b.Low("a"))
	require.Nil(t, b.Usages())
}
