package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestSlackStop: /weft stop with a link to a message of weft's thread
// stops the thread, as the API's abort does, and the thread says who
// stopped it.
func TestSlackStop(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	q := w.mention("hello")
	w.answers(t, q.TS, 1)
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)

	link := "https://acme.slack.com/archives/" + w.channel + "/p" + strings.Replace(q.TS, ".", "", 1)
	status, reply := w.command(t, slacktest.TeamID, "stop "+link)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, reply, "Stopped")
	got, err := w.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusAborted, got.Status)
	stopped := w.answers(t, q.TS, 2)
	require.Contains(t, stopped[1].Text, "Stopped from Slack by")
}
