package slack

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// stopFakes are the store and ingester as /weft stop reaches them.
type stopFakes struct {
	thread  *thread.Thread // the one thread there is, at C1/1700000000.000100 of T1
	running bool
	aborted []string
}

func (f *stopFakes) ThreadBySlackThread(_ context.Context, team, channel, ts string) (*thread.Thread, error) {
	if team != "T1" || channel != "C1" || ts != "1700000000.000100" {
		return nil, thread.ErrNotFound
	}
	return f.thread, nil
}

func (f *stopFakes) Abort(_ context.Context, id uuid.UUID, text string) (bool, error) {
	if id != f.thread.ID || !f.running {
		return false, nil
	}
	f.running = false
	f.aborted = append(f.aborted, text)
	return true, nil
}

// TestSlackStop: /weft stop with a thread's link stops weft's work there
// through the ingester's Abort, as the API's abort does; it says so when
// there was nothing to stop, and asks for a link without one.
func TestSlackStop(t *testing.T) {
	t.Parallel()
	f := &stopFakes{thread: &thread.Thread{ID: uuid.New()}, running: true}
	stop := slackStop(f, f, dbtest.Logger(t))
	cmd := func(team, text string) string {
		reply, err := stop(t.Context(), Command{TeamID: team, ChannelID: "C9", UserID: "U1", UserName: "ada", Command: "/weft", Text: text})
		require.NoError(t, err)
		return reply
	}
	link := "https://acme.slack.com/archives/C1/p1700000000000200?thread_ts=1700000000.000100&cid=C1"

	require.Contains(t, cmd("T1", ""), "Usage")
	require.Contains(t, cmd("T1", "that one"), "Usage")
	require.Contains(t, cmd("T2", link), "no conversation in that thread", "another workspace's thread is not found")
	require.Contains(t, cmd("T1", link), "Stopped")
	require.Equal(t, []string{"Stopped from Slack by ada."}, f.aborted)
	require.Contains(t, cmd("T1", link), "already", "a second stop changes nothing")
	require.Len(t, f.aborted, 1)
}
