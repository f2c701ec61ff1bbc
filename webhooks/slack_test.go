package webhooks_test

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

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/webhooks"
)

// TestSlackCommandFailureIsPlain: a subcommand that fails answers its
// caller with a plain sentence, never the error's text (which is logged).
func TestSlackCommandFailureIsPlain(t *testing.T) {
	t.Parallel()
	h := webhooks.NewHandler(webhooks.Deps{Logger: dbtest.Logger(t), Slack: &webhooks.Slack{
		SigningSecret: slacktest.SigningSecret,
		Commands: map[string]webhooks.SlackCommandHandler{
			"boom": func(context.Context, webhooks.SlackCommand) (string, error) {
				return "", errors.New("pq: relation slack_threads does not exist")
			},
		},
	}})
	body := []byte(url.Values{"team_id": {"T1"}, "channel_id": {"C1"}, "user_id": {"U1"},
		"command": {"/weft"}, "text": {"boom now"}}.Encode())
	req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/commands", strings.NewReader(string(body)))
	req.Header = slacktest.Sign(body, time.Now())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var reply struct{ ResponseType, Text string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &reply))
	require.NotContains(t, reply.Text, "pq:")
	require.NotContains(t, reply.Text, "slack_threads")
	require.Contains(t, reply.Text, "try again")
}
