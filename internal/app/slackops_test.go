package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// TestSlackEverywhere: a Slack conversation held through `weft serve`
// shows where an operator looks, as a new user would check from outside:
// the REST list filters on platform=slack, the detail carries the Slack
// attachment, and active_slack_threads (what `weft ops
// active_slack_threads` prints) lists it.
func TestSlackEverywhere(t *testing.T) {
	t.Parallel()
	w := newSlackWorldEnv(t, false, map[string]string{"WEFT_API_TOKEN": metricsToken})
	q := w.mention("where do you show?")
	w.answers(t, q.TS, 1)
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)

	get := func(path string, v any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, w.base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+metricsToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		require.NoError(t, json.Unmarshal(b, v), path)
	}
	var list struct {
		Threads []struct {
			ID    string         `json:"id"`
			Slack map[string]any `json:"slack"`
		} `json:"threads"`
	}
	get("/api/v1/threads?platform=slack", &list)
	require.Len(t, list.Threads, 1)
	require.Equal(t, th.ID.String(), list.Threads[0].ID)
	var detail struct {
		Slack map[string]any `json:"slack"`
	}
	get("/api/v1/threads/"+th.ID.String(), &detail)
	require.Equal(t, map[string]any{"team_id": slacktest.TeamID, "channel_id": w.channel, "thread_ts": q.TS,
		"channel_type": "channel", "active": true}, detail.Slack)

	rows, err := w.store.View(context.Background(), "active_slack_threads")
	require.NoError(t, err)
	require.Len(t, rows.Rows, 1)
	row := map[string]string{}
	for i, c := range rows.Columns {
		row[c] = rows.Rows[0][i]
	}
	require.Equal(t, th.ID.String(), row["thread_id"])
	require.Equal(t, w.channel, row["channel_id"])
}
