package github_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

// TestDeliveryLoop runs the fake's signed deliveries through a handler
// built the way the door will be: a redelivery parses to the same
// delivery id, and a forged one never reaches the parser.
func TestDeliveryLoop(t *testing.T) {
	t.Parallel()
	s, c, inst := setup(t)
	var (
		mu     sync.Mutex
		events []github.Event
	)
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, ok := c.ReadWebhook(w, r, webhook.Rejecter(r.Context(), w, slog.New(slog.DiscardHandler), "github_webhook_rejected"))
		if !ok {
			return
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(door.Close)
	s.DeliverTo(door.URL)

	n := s.AddIssue(repoFull, alice, "Broken", "", false)
	cm := s.AddComment(repoFull, n, alice, "@weft-test help")
	d := s.Deliver(github.EventIssueComment, s.CommentPayload(inst, "created", repoFull, n, cm))
	require.NoError(t, d.Err)
	require.Equal(t, http.StatusAccepted, d.Status)
	r := s.Redeliver(d.ID)
	require.Equal(t, http.StatusAccepted, r.Status)

	forged := githubtest.SignWith("not-the-secret", "forged-1", github.EventIssueComment, d.Body)
	req, err := http.NewRequest(http.MethodPost, door.URL, forged.Request(door.URL).Body)
	require.NoError(t, err)
	req.Header = forged.Header
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 2)
	require.Equal(t, d.ID, events[0].Delivery)
	require.Equal(t, d.ID, events[1].Delivery, "a redelivery keeps X-GitHub-Delivery")
	require.Equal(t, github.IntentMention, events[1].Intent)
	require.Equal(t, cm.ID, events[1].Comment.ID)
}
