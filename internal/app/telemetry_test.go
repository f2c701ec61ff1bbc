package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	dto "github.com/prometheus/client_model/go"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
)

const metricsToken = "metrics-token"

// scrape reads /metrics and parses it.
func (w *linearWorld) scrape(t *testing.T) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.base+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return string(body), fams
}

// value is the value of the series of fam with labels (a counter's,
// gauge's, or a histogram's count), and whether it exists.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// promtool returns promtool's path. Without it the caller's check is
// skipped, except in CI, where .ci/run installs it: there it fails.
func promtool(t *testing.T) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err == nil {
		return path, true
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("promtool is not installed (apt-get install prometheus); .ci/run installs it")
	}
	t.Log("promtool is not installed: its check is skipped (it fails under CI=true)")
	return "", false
}

// TestMetricsAfterConversation runs a Linear conversation (a mention, a
// tool call, an answer; a redelivery and a forged delivery beside it) and
// checks what /metrics says about it.
func TestMetricsAfterConversation(t *testing.T) {
	t.Parallel()
	w := newLinearWorldWith(t, map[string]string{"WEFT_API_TOKEN": metricsToken, "WEFT_LOG_LEVEL": "info"}, nil)
	w.llm.Enqueue(
		llmtest.Reply{Text: "Noting it.", ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"redirects","content":"login redirects go through /auth"}`}}},
		llmtest.Reply{Text: "Fix it in /auth."},
	)
	d, opts := w.signer.Created(lineartest.SessionOpts{SessionID: "7a4c8f7e-1111-4e0e-9a55-000000000001", PromptContext: "Why?"})
	w.linear.AddSession(opts.SessionID, opts.IssueID)
	w.deliver(t, d)
	w.deliver(t, d) // a redelivery
	forged := d
	forged.Header = d.Header.Clone()
	forged.Header.Set("Linear-Signature", strings.Repeat("0", 64))
	req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/linear", bytes.NewReader(forged.Body))
	require.NoError(t, err)
	req.Header = forged.Header
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	w.activities(t, opts.SessionID, 4)

	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"weft_events_total", map[string]string{"platform": "linear", "source": "webhook", "outcome": "accepted"}, 1},
		{"weft_events_total", map[string]string{"platform": "linear", "source": "webhook", "outcome": "duplicate"}, 1},
		{"weft_events_total", map[string]string{"platform": "linear", "source": "webhook", "outcome": "refused"}, 1},
		{"weft_http_requests_total", map[string]string{"route": "/webhooks/linear", "method": "POST", "code": "200"}, 2},
		{"weft_http_requests_total", map[string]string{"route": "/webhooks/linear", "method": "POST", "code": "401"}, 1},
		{"weft_http_request_duration_seconds", map[string]string{"route": "/webhooks/linear", "method": "POST"}, 3},
		{"weft_turns_total", map[string]string{"outcome": "answered"}, 1},
		{"weft_turns_total", map[string]string{"outcome": "gave_up"}, 0},
		{"weft_turn_duration_seconds", nil, 1},
		{"weft_turn_steps", nil, 1},
		{"weft_model_calls_total", map[string]string{"provider": "openai", "model": "gpt-4o", "outcome": "ok"}, 2},
		{"weft_model_call_duration_seconds", map[string]string{"provider": "openai", "model": "gpt-4o", "outcome": "ok"}, 2},
		{"weft_tool_calls_total", map[string]string{"tool": "save_memory", "outcome": "ok"}, 1},
		{"weft_tool_call_duration_seconds", map[string]string{"tool": "save_memory", "outcome": "ok"}, 1},
		// The acknowledgement, the thought beside the tool call, the
		// action and the response.
		{"weft_outbox_send_attempts_total", map[string]string{"platform": "linear", "outcome": "ok"}, 4},
		{"weft_outbox_send_duration_seconds", map[string]string{"platform": "linear", "outcome": "ok"}, 4},
		{"weft_outbox_backlog", map[string]string{"platform": "linear"}, 0},
		{"weft_threads_stuck", nil, 0},
		{"weft_state_up", nil, 1},
		{"weft_discord_shards_held", nil, 0},
		{"weft_leases_taken_over_total", nil, 0},
	}
	var body string
	var fams map[string]*dto.MetricFamily
	// The last send is counted just after the fake records it, and the
	// turn once its job completes, which may come after the answer's send.
	require.Eventually(t, func() bool {
		body, fams = w.scrape(t)
		v, _ := value(fams, "weft_outbox_send_attempts_total", map[string]string{"platform": "linear", "outcome": "ok"})
		b, _ := value(fams, "weft_outbox_backlog", map[string]string{"platform": "linear"})
		turns, _ := value(fams, "weft_turns_total", map[string]string{"outcome": "answered"})
		return v == 4 && b == 0 && turns == 1
	}, 20*time.Second, 20*time.Millisecond)
	for _, c := range want {
		got, ok := value(fams, c.name, c.labels)
		require.True(t, ok, "no series %s%v", c.name, c.labels)
		require.Equal(t, c.value, got, "%s%v", c.name, c.labels)
	}
	steps := fams["weft_turn_steps"].GetMetric()[0].GetHistogram()
	require.Equal(t, 2.0, steps.GetSampleSum(), "two model calls in the turn")
	in, _ := value(fams, "weft_model_input_tokens_total", map[string]string{"provider": "openai", "model": "gpt-4o"})
	out, _ := value(fams, "weft_model_output_tokens_total", map[string]string{"provider": "openai", "model": "gpt-4o"})
	require.Positive(t, in)
	require.Positive(t, out)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "weft_river_jobs", "weft_sweeps_total", "weft_thread_replies_requests_total"} {
		require.Contains(t, fams, name)
	}
	// No series is labelled with an id.
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				require.NotContains(t, l.GetValue(), opts.SessionID, name)
				require.NotContains(t, []string{"thread_id", "session_id", "user_id", "message_id"}, l.GetName(), name)
			}
		}
	}

	// Every line of a request carries its id, and no line a key twice.
	var requests int
	for _, line := range strings.Split(strings.TrimSpace(w.logs.String()), "\n") {
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		switch l["msg"] {
		case "http request", "linear delivery rejected":
			requests++
			require.NotEmpty(t, l["request_id"], line)
			for k := range l {
				require.Equal(t, 1, strings.Count(line, `"`+k+`":`), "key %s twice in %s", k, line)
			}
		}
	}
	require.Positive(t, requests)

	if path, ok := promtool(t); ok {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool check metrics:\n%s", out)
	}
}

// TestTraceOfLinearConversation follows one Linear mention from its
// webhook to the posts of its answer: one trace, spans nested as the work
// was, and its trace id on the stitches it produced.
func TestTraceOfLinearConversation(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewInMemoryExporter()
	w := newLinearWorldWith(t, nil, spans)
	w.llm.Enqueue(
		llmtest.Reply{Text: "Noting it.", ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: `{"label":"l","content":"c"}`}}},
		llmtest.Reply{Text: "Done."},
	)
	s := w.mention(t, "Trace me")
	w.activities(t, s.SessionID, 4)

	// A span is exported as it ends, a parent after its children: wait
	// for the response's post and every span's parent.
	var byID map[string]tracetest.SpanStub
	complete := func() bool {
		byID = map[string]tracetest.SpanStub{}
		all := spans.GetSpans()
		for _, sp := range all {
			byID[sp.SpanContext.SpanID().String()] = sp
		}
		posted := false
		for _, sp := range all {
			if _, ok := byID[sp.Parent.SpanID().String()]; sp.Parent.IsValid() && !ok {
				return false
			}
			posted = posted || sp.Name == "post linear response"
		}
		return posted
	}
	require.Eventually(t, complete, 20*time.Second, 10*time.Millisecond, "spans: %v", names(spans.GetSpans()))

	var roots []tracetest.SpanStub
	for _, sp := range byID {
		if !sp.Parent.IsValid() {
			roots = append(roots, sp)
		}
	}
	require.Len(t, roots, 1, "one trace, one root")
	require.Equal(t, "webhook linear", roots[0].Name)
	traceID := roots[0].SpanContext.TraceID()
	// ancestors lists the names above sp, its parent first.
	ancestors := func(sp tracetest.SpanStub) []string {
		var names []string
		for sp.Parent.IsValid() {
			sp = byID[sp.Parent.SpanID().String()]
			names = append(names, sp.Name)
		}
		return names
	}
	const ingest = "ingest linear AgentSessionEvent created"
	count := map[string]int{}
	for _, sp := range byID {
		require.Equal(t, traceID, sp.SpanContext.TraceID(), "span %s is in another trace", sp.Name)
		up := ancestors(sp)
		count[sp.Name]++
		switch {
		case sp.Name == ingest:
			require.Equal(t, []string{"webhook linear"}, up)
		case sp.Name == "job weft_turn":
			require.Equal(t, []string{ingest, "webhook linear"}, up)
		case strings.HasPrefix(sp.Name, "model "), strings.HasPrefix(sp.Name, "tool "):
			require.Equal(t, "job weft_turn", up[0], sp.Name)
		case sp.Name == "post linear thought" && up[0] == ingest:
			count["acknowledgement"]++ // sent express, as the session commits
		case strings.HasPrefix(sp.Name, "post linear"):
			// Sent by a delivery job the turn enqueued, or one a sent post
			// woke (the next in line).
			require.Equal(t, "job weft_delivery", up[0], sp.Name)
			require.Contains(t, up, "job weft_turn", sp.Name)
		}
	}
	for name, n := range map[string]int{
		"webhook linear": 1, ingest: 1, "job weft_turn": 1, "model gpt-4o": 2, "tool save_memory": 1,
		"acknowledgement": 1, "post linear thought": 2, "post linear action": 1, "post linear response": 1,
	} {
		require.Equal(t, n, count[name], "%s spans; all: %v", name, count)
	}

	// The stitches the trace produced carry its id.
	chain, err := w.store.Stitches(context.Background(), w.thread(t, s.SessionID).ID, db.StitchPage{})
	require.NoError(t, err)
	stamped := map[string]int{}
	for _, st := range chain {
		var meta struct {
			TraceID string `json:"trace_id"`
		}
		if len(st.Metadata) > 0 {
			require.NoError(t, json.Unmarshal(st.Metadata, &meta))
		}
		if meta.TraceID != "" {
			require.Equal(t, traceID.String(), meta.TraceID)
			stamped[string(st.Type)]++
		}
	}
	require.Equal(t, map[string]int{"initial_prompt": 1, "llm_call": 2, "tool_call": 1, "agent_thought": 1}, stamped)
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
