package github_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github/githubtest"
)

// TestOpenAPICheckRefuses shows the check the fake makes of every request
// can fail: requests GitHub's description does not allow are refused.
func TestOpenAPICheckRefuses(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]githubtest.Call{
		"unknown path":     {Method: "GET", URL: "/repos/acme/widgets/issues/1/timeline"},
		"wrong method":     {Method: "DELETE", URL: "/repos/acme/widgets/issues/1"},
		"undeclared query": {Method: "GET", URL: "/repos/acme/widgets/issues/1/comments?direction=desc"},
		"bad number":       {Method: "GET", URL: "/repos/acme/widgets/issues/one"},
		"bad reaction":     {Method: "POST", URL: "/repos/acme/widgets/issues/comments/5/reactions", Body: []byte(`{"content":"thumbsup"}`), Header: http.Header{"Content-Type": {"application/json"}}},
		"comment no body":  {Method: "POST", URL: "/repos/acme/widgets/issues/1/comments", Body: []byte(`{}`), Header: http.Header{"Content-Type": {"application/json"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, githubtest.ValidateCall(c))
		})
	}
	require.NoError(t, githubtest.ValidateCall(githubtest.Call{Method: "POST", URL: "/repos/acme/widgets/issues/1/comments",
		Body: []byte(`{"body":"hi"}`), Header: http.Header{"Content-Type": {"application/json"}}}))
}
