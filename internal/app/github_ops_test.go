package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// TestGitHubEverywhere: a GitHub conversation shows wherever the other
// platforms' do: /metrics labels its deliveries and posts
// platform="github", the REST list filters on platform=github and the
// detail carries the attachment, and the active_github_threads view (what
// `weft ops active_github_threads` prints) lists it.
func TestGitHubEverywhere(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	ctx := context.Background()
	n := w.gh.AddIssue(githubRepo, w.bob, "Everywhere", "", false)
	w.comment(t, n, "@weft-test where do you show?")
	w.answers(t, n, 1)
	th := w.thread(t, n)
	waitSettled(t, w.store, th.ID)
	d := w.gh.Deliver("star", map[string]any{"action": "created", "sender": map[string]any{"login": "bob"}})
	require.Equal(t, http.StatusOK, d.Status)

	get := func(path string) []byte {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, w.base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+metricsToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return b
	}

	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(get("/metrics")))
	require.NoError(t, err)
	for _, s := range []struct {
		name   string
		labels map[string]string
	}{
		{"weft_events_total", map[string]string{"platform": "github", "source": "webhook", "outcome": "accepted"}},
		{"weft_events_total", map[string]string{"platform": "github", "source": "webhook", "outcome": "ignored"}},
		{"weft_outbox_send_attempts_total", map[string]string{"platform": "github", "outcome": "ok"}},
		{"weft_outbox_send_duration_seconds", map[string]string{"platform": "github", "outcome": "ok"}},
	} {
		v, ok := value(fams, s.name, s.labels)
		require.True(t, ok, "%s%v", s.name, s.labels)
		require.Positive(t, v, "%s%v", s.name, s.labels)
	}

	var list struct {
		Threads []struct {
			ID     string         `json:"id"`
			GitHub map[string]any `json:"github"`
		} `json:"threads"`
	}
	require.NoError(t, json.Unmarshal(get("/api/v1/threads?platform=github"), &list))
	require.Len(t, list.Threads, 1)
	require.Equal(t, th.ID.String(), list.Threads[0].ID)
	var detail struct {
		GitHub map[string]any `json:"github"`
	}
	require.NoError(t, json.Unmarshal(get("/api/v1/threads/"+th.ID.String()), &detail))
	require.Equal(t, "acme", detail.GitHub["owner"])
	require.Equal(t, "api", detail.GitHub["repo"])
	require.EqualValues(t, n, detail.GitHub["number"])
	require.NoError(t, json.Unmarshal(get("/api/v1/threads?platform=slack"), &list))
	require.Empty(t, list.Threads)

	rows, err := w.store.View(ctx, "active_github_threads")
	require.NoError(t, err)
	require.Len(t, rows.Rows, 1)
	row := map[string]string{}
	for i, c := range rows.Columns {
		row[c] = rows.Rows[0][i]
	}
	require.Equal(t, th.ID.String(), row["thread_id"])
	require.Equal(t, "acme", row["repo_owner"])
	require.Equal(t, "api", row["repo_name"])
}

// TestGitHubAckBeforeAnswer: a mention's 👀 goes out on the express path,
// not after the model: the model is held until the 👀 is on the mention
// at the fake, and the answer still comes. The time from the delivery to
// the 👀 is logged; `weft bench github` measures its p99.
func TestGitHubAckBeforeAnswer(t *testing.T) {
	t.Parallel()
	w := newGitHubWorld(t)
	n := w.gh.AddIssue(githubRepo, w.bob, "Quick", "", false)
	eyes := func() bool {
		cs := w.gh.Issue(githubRepo, n).Comments
		return len(cs) > 0 && len(cs[0].Reactions) == 1 && cs[0].Reactions[0].Content == githubapi.ReactionEyes
	}
	// waitEyes waits for the 👀: the fake records a call once it is
	// answered, the reaction stored.
	waitEyes := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := w.gh.CallLog().Wait(ctx, func([]githubtest.Call) bool { return eyes() })
		return err
	}
	var sawEyes atomic.Bool
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		sawEyes.Store(waitEyes() == nil)
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content}
	})
	sent := time.Now()
	w.comment(t, n, "@weft-test quick one")
	require.NoError(t, waitEyes(), "no 👀 on the mention")
	t.Logf("delivery → 👀 at the fake: %s", time.Since(sent))
	w.answers(t, n, 1)
	require.True(t, sawEyes.Load(), "the 👀 was on the mention before the model answered")
}
