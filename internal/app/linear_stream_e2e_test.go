package app

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
)

// Linear plugs into the runner's fan-out of partial answers.
var _ streaming = (*surfacelinear.App)(nil)

// TestLinearStreamsProgressThoughts delegates an issue to weft serve on a
// model that writes its answer over about a second: the session shows the
// answer's progress as ephemeral thoughts, each replaced by the next and
// the last by the one response, unless the workspace's request budget is
// low (Linear reports it nearly spent) or Linear's streaming is off.
func TestLinearStreamsProgressThoughts(t *testing.T) {
	t.Parallel()
	const answer = "The redirect drops the return URL because the login handler rebuilds the query string " +
		"without it; keep the original parameters when redirecting to /auth and add a test for the round trip."
	tests := []struct {
		name     string
		env      map[string]string
		lowOn    bool
		thoughts bool
	}{
		{name: "streams", thoughts: true},
		{name: "budget low", lowOn: true},
		{name: "stream off", env: map[string]string{"WEFT_STREAM_LINEAR": "off"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"WEFT_LINEAR_THOUGHT_INTERVAL": "50ms", "WEFT_API_TOKEN": "metrics-token"}
			for k, v := range tc.env {
				env[k] = v
			}
			w := newLinearWorldWith(t, env, nil)
			if tc.lowOn {
				// Another client of the same app user spent the hour: 100
				// of 5,000 left, below the reserve of 1,000.
				w.linear.SetRequestsRemaining(lineartest.OrganizationID, 100)
			}
			// About 1.3 s of writing: 8 runes a delta, 25 ms apart.
			w.llm.Enqueue(llmtest.Reply{Text: answer, Chunk: 8, Pace: 25 * time.Millisecond})
			d, opts := w.signer.Created(lineartest.SessionOpts{})
			w.linear.AddSession(opts.SessionID, opts.IssueID)
			w.deliver(t, d)

			var acts []lineartest.Activity
			require.Eventually(t, func() bool {
				acts = w.linear.Activities(opts.SessionID)
				return slices.ContainsFunc(acts, func(a lineartest.Activity) bool { return a.Type == "response" })
			}, 30*time.Second, 10*time.Millisecond, "no response in the session")
			require.True(t, w.llm.Requests()[0].Stream, "the model call streams")
			respAt := slices.IndexFunc(acts, func(a lineartest.Activity) bool { return a.Type == "response" })
			require.Equal(t, answer, acts[respAt].Body)
			var progress []lineartest.Activity
			for i, a := range acts {
				if a.Type == "thought" && a.Body != surfacelinear.Ack {
					require.True(t, a.Ephemeral, "a progress thought is ephemeral")
					require.Less(t, i, respAt, "a progress thought came after the response")
					require.True(t, strings.HasPrefix(answer, a.Body), "a thought holds the answer so far: %q", a.Body)
					progress = append(progress, a)
				}
			}
			if tc.thoughts {
				require.NotEmpty(t, progress, "no progress thought before the response")
			} else {
				require.Empty(t, progress)
			}
			shown := w.linear.Shown(opts.SessionID)
			require.Equal(t, "response", shown[len(shown)-1].Type, "the response is the last thing shown")
			require.Empty(t, lineartest.Ephemeral(shown), "every ephemeral thought was replaced")

			// The requests weft made are counted as a metric.
			req, err := http.NewRequest(http.MethodGet, w.base+"/metrics", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer metrics-token")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Contains(t, string(body), `weft_linear_requests_hour{organization=""}`)
			require.Contains(t, string(body), `weft_linear_progress_thoughts_total{outcome="posted"}`)
		})
	}
}
