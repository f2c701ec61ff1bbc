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

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

// TestSlackCommandFailureIsPlain: a subcommand that fails answers its
// caller with a plain sentence, never the error's text (which is logged).
func TestSlackCommandFailureIsPlain(t *testing.T) {
	t.Parallel()
	h := mount(t, &surfaceslack.Doors{
		SigningSecret: slacktest.SigningSecret,
		Commands: map[string]surfaceslack.CommandHandler{
			"boom": func(context.Context, surfaceslack.Command) (string, error) {
				return "", errors.New("pq: relation slack_threads does not exist")
			},
		},
	})
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

// mount serves d's routes as weft serve does, with the shared middleware.
func mount(t *testing.T, d *surfaceslack.Doors) http.Handler {
	t.Helper()
	r := chi.NewRouter()
	d.Routes(r, webhook.NewMount(webhook.MountDeps{Logger: dbtest.Logger(t)}))
	return r
}
