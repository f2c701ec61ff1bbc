package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

// TestActionsDispatchByPrefix: a block action goes to the handler of the
// longest action_id prefix registered (a feature's buttons, as tool
// approvals' "weft_approval:", beside others'), with the click's message
// and thread; one nobody registered is acknowledged and runs nothing; a
// handler's failure is a 500, for Slack to send it again.
func TestActionsDispatchByPrefix(t *testing.T) {
	t.Parallel()
	var got []string
	var last surfaceslack.Action
	record := func(name string) surfaceslack.ActionHandler {
		return func(_ context.Context, a surfaceslack.Action) error {
			got, last = append(got, name), a
			return nil
		}
	}
	h := mount(t, &surfaceslack.Doors{
		SigningSecret: slacktest.SigningSecret,
		Actions: map[string]surfaceslack.ActionHandler{
			"weft_approval:":          record("approval"),
			"weft_approval:deny:":     record("deny"),
			slackapi.FeedbackActionID: record("feedback"),
			"boom":                    func(context.Context, surfaceslack.Action) error { return errors.New("database down") },
		},
	})
	click := func(actionID string) int {
		p, _ := json.Marshal(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T1"},
			"user":      map[string]any{"id": "U1", "username": "ada"},
			"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": "2.000002", "thread_ts": "1.000001"},
			"actions":   []map[string]any{{"action_id": actionID, "block_id": "b1", "type": "button", "value": "v", "action_ts": "3.000003"}}})
		body := []byte(url.Values{"payload": {string(p)}}.Encode())
		req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/interactions", strings.NewReader(string(body)))
		req.Header = slacktest.Sign(body, time.Now())
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	require.Equal(t, http.StatusOK, click("weft_approval:tool-call-7"))
	require.Equal(t, http.StatusOK, click("weft_approval:deny:tool-call-7"))
	require.Equal(t, http.StatusOK, click(slackapi.FeedbackActionID))
	require.Equal(t, http.StatusOK, click("someone_elses"))
	require.Equal(t, http.StatusInternalServerError, click("boom"))
	require.Equal(t, []string{"approval", "deny", "feedback"}, got)
	require.Equal(t, surfaceslack.Action{TeamID: "T1", UserID: "U1", UserName: "ada", ChannelID: "C1", MessageTS: "2.000002",
		ThreadTS: "1.000001", ActionID: slackapi.FeedbackActionID, BlockID: "b1", Type: "button", Value: "v", ActionTS: "3.000003"}, last)
}
