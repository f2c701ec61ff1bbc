package deploy

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
)

// TestGitHubManifest checks the manifest teams create weft's GitHub App
// from: the permissions the docs promise, every event weft handles
// subscribed, and deliveries sent to weft's door.
func TestGitHubManifest(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("github-app-manifest.json")
	require.NoError(t, err)
	var m struct {
		Hook struct {
			URL    string `json:"url"`
			Active bool   `json:"active"`
		} `json:"hook_attributes"`
		Permissions map[string]string `json:"default_permissions"`
		Events      []string          `json:"default_events"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Equal(t, map[string]string{"issues": "write", "pull_requests": "write", "contents": "read", "metadata": "read"}, m.Permissions)
	// Installation events reach every app unsubscribed; these must be.
	for _, ev := range []string{githubapi.EventIssueComment, githubapi.EventIssues, githubapi.EventReviewComment} {
		require.Contains(t, m.Events, ev)
	}
	require.True(t, m.Hook.Active)
	require.Regexp(t, `^https://[^/]+/webhooks/github$`, m.Hook.URL)
}
