package github_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
)

// TestDoorSeen: the door tells the caches of a verified delivery, with
// the issue it is about, and of nothing forged.
func TestDoorSeen(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	var mu sync.Mutex
	var seen []githubapi.Event
	door := r.door.(surfacegithub.Door)
	door.Seen = func(e githubapi.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e)
	}
	r.door = door
	n := r.gh.AddIssue("acme/api", r.bob, "t", "", false)
	body, err := json.Marshal(r.gh.CommentPayload(r.inst, "edited", "acme/api", n, r.gh.AddComment("acme/api", n, r.bob, "hi")))
	require.NoError(t, err)
	good := r.gh.Sign(githubapi.EventIssueComment, body)
	require.Equal(t, http.StatusUnauthorized, r.serve(githubtest.SignWith("not-the-secret", good.ID, good.Event, body).Request("/webhooks/github")))
	require.Empty(t, seen)
	require.Equal(t, http.StatusOK, r.serve(good.Request("/webhooks/github")))
	require.Len(t, seen, 1)
	require.Equal(t, r.inst, seen[0].Installation)
	require.Equal(t, n, seen[0].Issue.Number)
	require.NotZero(t, seen[0].Repo.ID)
}
