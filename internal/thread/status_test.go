package thread_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

func TestCanTransition(t *testing.T) {
	t.Parallel()
	allowed := map[[2]thread.Status]bool{
		{thread.StatusPending, thread.StatusRunning}:   true,
		{thread.StatusPending, thread.StatusFailed}:    true,
		{thread.StatusPending, thread.StatusAborted}:   true,
		{thread.StatusRunning, thread.StatusWaiting}:   true,
		{thread.StatusRunning, thread.StatusCompleted}: true,
		{thread.StatusRunning, thread.StatusFailed}:    true,
		{thread.StatusRunning, thread.StatusAborted}:   true,
		{thread.StatusWaiting, thread.StatusRunning}:   true,
		{thread.StatusWaiting, thread.StatusCompleted}: true,
		{thread.StatusWaiting, thread.StatusFailed}:    true,
		{thread.StatusWaiting, thread.StatusAborted}:   true,
		{thread.StatusCompleted, thread.StatusRunning}: true,
		{thread.StatusFailed, thread.StatusRunning}:    true,
		{thread.StatusAborted, thread.StatusRunning}:   true,
	}
	// Every pair, so a transition added by mistake fails here too.
	for _, from := range thread.Statuses {
		for _, to := range thread.Statuses {
			require.Equal(t, allowed[[2]thread.Status{from, to}], thread.CanTransition(from, to), "%s → %s", from, to)
		}
	}
	require.ElementsMatch(t, []thread.Status{thread.StatusPending, thread.StatusWaiting, thread.StatusCompleted, thread.StatusFailed, thread.StatusAborted},
		thread.SourcesOf(thread.StatusRunning))
}

func TestStatusChangeValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    thread.StatusChange
		ok   bool
	}{
		{"Running", thread.StatusChange{To: thread.StatusRunning}, true},
		{"WaitingNeedsReason", thread.StatusChange{To: thread.StatusWaiting}, false},
		{"Waiting", thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}, true},
		{"CompletedNeedsResult", thread.StatusChange{To: thread.StatusCompleted}, false},
		{"FailedNeedsError", thread.StatusChange{To: thread.StatusFailed}, false},
		{"Unknown", thread.StatusChange{To: "sleeping"}, false},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		if tt.ok {
			require.NoError(t, err, tt.name)
		} else {
			require.ErrorIs(t, err, thread.ErrInvalid, tt.name)
		}
	}
}
