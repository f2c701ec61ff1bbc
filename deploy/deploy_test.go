// Package deploy holds the files operators deploy beside weft: the Grafana
// dashboard and the Prometheus alerts. Its tests check them.
package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// promtool returns promtool's path, skipping the test without it, except
// in CI, where .ci/run installs it: there the test fails.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("promtool is not installed (apt-get install prometheus); .ci/run installs it")
	}
	t.Skip("promtool is not installed (the test fails under CI=true)")
	return ""
}

func TestAlertRules(t *testing.T) {
	t.Parallel()
	path := promtool(t)
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(path, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// series matches weft's series names in an expression.
var series = regexp.MustCompile(`\bweft_[a-z_]+`)

// documented is the metrics docs/operations.md lists, by name.
func documented(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(weft_[a-z_]+)`").FindAllSubmatch(doc, -1) {
		names[string(m[1])] = true
	}
	require.NotEmpty(t, names, "docs/operations.md lists no metrics")
	return names
}

// base strips a histogram's series suffix.
func base(name string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if n, ok := strings.CutSuffix(name, s); ok && (strings.HasSuffix(n, "_seconds") || strings.HasSuffix(n, "_steps")) {
			return n
		}
	}
	return name
}

// TestFilesUseDocumentedMetrics keeps the dashboard and the alerts to
// series weft exports and docs/operations.md documents: a renamed metric breaks
// this, not a dashboard nobody looks at until an outage.
func TestFilesUseDocumentedMetrics(t *testing.T) {
	t.Parallel()
	docs := documented(t)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	b, err := os.ReadFile("grafana/weft.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &dash))
	require.NotEmpty(t, dash.Panels)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, n := range series.FindAllString(tg.Expr, -1) {
				require.True(t, docs[base(n)], "panel %q uses %s, which docs/operations.md does not document", p.Title, n)
				used[base(n)] = true
			}
		}
	}
	alerts, err := os.ReadFile("prometheus/alerts.yml")
	require.NoError(t, err)
	for _, n := range series.FindAllString(string(alerts), -1) {
		require.True(t, docs[base(n)], "alerts.yml uses %s, which docs/operations.md does not document", n)
	}
	// Every documented weft metric is on the dashboard.
	for n := range docs {
		if !strings.HasPrefix(n, "weft_thread_replies_") {
			require.True(t, used[n], "the dashboard shows no %s", n)
		}
	}
}
