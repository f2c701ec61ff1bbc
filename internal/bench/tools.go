package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/mcpclient"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// targetToolsAddedP99 is issue 26's bound on what weft adds to an MCP
// call's p99, alone and with 100 turns calling at once.
const targetToolsAddedP99 = 5 * time.Millisecond

// toolsServerEnv set to 1 makes weft-bench the tools benchmark's stdio MCP
// server instead (the benchmark starts itself as its server).
const toolsServerEnv = "WEFT_BENCH_MCP_SERVER"

// toolsServer is the benchmark's MCP server: one read-only tool, work,
// that spends its "ms" argument (the server's own time) and echoes its
// "text".
func toolsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weft-bench-tools", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "work", Description: "spend ms milliseconds, then echo text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"ms":{"type":"integer"}}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
				Ms   int    `json:"ms"`
			}
			if err := json.Unmarshal(r.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.Ms > 0 {
				select {
				case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	return s
}

// serveToolsStdio is the stdio server's process: it serves until its
// client closes stdin.
func serveToolsStdio() int {
	if err := toolsServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "weft-bench tools server:", err)
		return 1
	}
	return 0
}

// toolsCall is one way of making the work tool's call: it returns the
// text the call answered.
type toolsCall func(ctx context.Context, text string, ms int) (string, error)

// benchTools measures what weft adds to an MCP call: the call made
// through an agent step's tool path (the registry, the MCP client of
// internal/mcpclient, the span, the metrics) beside the same call made
// directly with the SDK to the same server in the same run, over stdio (a
// child process, this binary) and Streamable HTTP (in process, loopback);
// then turns callers at once on the one stdio server, beside the same
// load made directly.
func benchTools(ctx context.Context, _ *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench tools", flag.ContinueOnError)
	samples := fs.Int("samples", 2000, "calls timed per transport and way (weft and direct alternate)")
	turns := fs.Int("turns", 100, "callers at once on the one stdio server")
	rounds := fs.Int("rounds", 30, "rounds of turns callers at once, per way")
	work := fs.Int("work", 5, "milliseconds the server spends on each call of the concurrent run (its own time)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *samples < 1 || *turns < 1 || *rounds < 1 || *work < 0 {
		return badFlags(fs, stderr)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	serverEnv := map[string]string{toolsServerEnv: "1", "WEFT_TEST_AS_WEFT": "1"}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The HTTP server, in this process on a loopback port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return toolsServer() }, nil),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpSrv.Serve(ln) }()
	defer httpSrv.Close()
	httpURL := "http://" + ln.Addr().String()

	// weft's side: the MCP client as serve runs it, its tools in a
	// registry, called as a step calls them.
	conf, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"stdio": map[string]any{"command": exe, "env": serverEnv},
		"http":  map[string]any{"url": httpURL},
	}})
	if err != nil {
		return err
	}
	mc, err := mcpclient.Parse(conf, os.Getenv)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.DiscardHandler)
	mgr := mcpclient.New(mcpclient.Deps{Config: mc, Logger: logger.With("component", "mcp_client")})
	var wg sync.WaitGroup
	wg.Go(func() { mgr.Run(ctx) })
	defer wg.Wait()
	defer cancel()
	if err := waitToolsListed(ctx, mgr, "mcp__stdio__work", "mcp__http__work"); err != nil {
		return err
	}
	reg, err := tools.NewRegistry()
	if err != nil {
		return err
	}
	reg.AddSource(mgr.Tools)
	met, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return err
	}
	runner := &agent.Runner{Tools: reg, Metrics: met, Logger: quiet}
	th := &thread.Thread{ID: uuid.New(), Type: thread.TypeAutonomous}
	viaWeft := func(name string) toolsCall {
		return func(ctx context.Context, text string, ms int) (string, error) {
			argv, _ := json.Marshal(map[string]any{"text": text, "ms": ms})
			out, failed := runner.CallTool(ctx, th, llm.ToolCall{ID: text, Name: name, Arguments: argv})
			if failed {
				return "", errors.New(out)
			}
			return out, nil
		}
	}

	// The anchor: the same server, reached directly with the SDK.
	cmd := exec.Command(exe)
	cmd.Env = os.Environ()
	for k, v := range serverEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "weft-bench", Version: "1"}, nil)
	stdioDirect, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		return fmt.Errorf("stdio connect: %w", err)
	}
	defer stdioDirect.Close()
	httpDirect, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: httpURL}, nil)
	if err != nil {
		return fmt.Errorf("http connect: %w", err)
	}
	defer httpDirect.Close()

	fmt.Fprintf(stdout, "weft-bench tools: one MCP call through an agent step's tool path (weft) beside the same call made directly with the SDK (anchor), same server, same run\n")
	fmt.Fprintf(stdout, "sequential: %d calls per way, alternating; concurrent: %d callers at once on one stdio server, %d rounds, the server spending %d ms a call\n\n",
		*samples, *turns, *rounds, *work)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tanchor p50\tanchor p99\tweft p50\tweft p99\tweft adds (p99)\ttarget\t")
	pass := true
	row := func(name string, anchor, weft kit.Latencies) {
		added := weft.Percentile(99) - anchor.Percentile(99)
		ok := added <= targetToolsAddedP99
		pass = pass && ok
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t≤ %s %s\t\n", name, kit.Ms(anchor.Percentile(50)), kit.Ms(anchor.Percentile(99)),
			kit.Ms(weft.Percentile(50)), kit.Ms(weft.Percentile(99)), kit.Ms(added), targetToolsAddedP99, kit.Verdict(ok))
	}
	for _, tr := range []struct {
		name   string
		direct *mcp.ClientSession
		tool   string
	}{{"stdio, 1 call", stdioDirect, "mcp__stdio__work"}, {"HTTP, 1 call", httpDirect, "mcp__http__work"}} {
		anchor, weft, err := timeAlternating(ctx, directCall(tr.direct), viaWeft(tr.tool), *samples)
		if err != nil {
			return fmt.Errorf("%s: %w", tr.name, err)
		}
		row(tr.name, anchor, weft)
	}
	anchor, weft, err := timeConcurrent(ctx, directCall(stdioDirect), viaWeft("mcp__stdio__work"), *turns, *rounds, *work)
	if err != nil {
		return fmt.Errorf("concurrent: %w", err)
	}
	row(fmt.Sprintf("stdio, %d at once", *turns), anchor, weft)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nweft adds = weft p99 − anchor p99; the anchor includes the server's own time and the SDK's transport.\n")
	fmt.Fprintf(stdout, "overall: %s\n", kit.Verdict(pass))
	return nil
}

// waitToolsListed waits until the manager offers every tool named.
func waitToolsListed(ctx context.Context, m *mcpclient.Manager, names ...string) error {
	deadline := time.After(time.Minute)
	for {
		changed := m.Changed()
		have := map[string]bool{}
		for _, t := range m.Tools() {
			have[t.Name] = true
		}
		if !slices.ContainsFunc(names, func(n string) bool { return !have[n] }) {
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			return fmt.Errorf("the MCP servers never offered %v (have %v)", names, have)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// directCall is the anchor: the work tool called with the SDK's session.
func directCall(s *mcp.ClientSession) toolsCall {
	return func(ctx context.Context, text string, ms int) (string, error) {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{"text": text, "ms": ms}})
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", errors.New("tool error")
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return "", errors.New("not text")
		}
		return tc.Text, nil
	}
}

// timedCall makes one call and checks it echoed its text.
func timedCall(ctx context.Context, call toolsCall, text string, ms int) (time.Duration, error) {
	start := time.Now()
	out, err := call(ctx, text, ms)
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if out != text {
		return 0, fmt.Errorf("answered %q, want %q", out, text)
	}
	return elapsed, nil
}

// timeAlternating makes samples calls each way, one after the other, the
// two ways alternating so that both see the same machine; it returns the
// sorted latencies of each.
func timeAlternating(ctx context.Context, anchor, weft toolsCall, samples int) (kit.Latencies, kit.Latencies, error) {
	const warmup = 50
	var a, w kit.Latencies
	for i := range warmup + samples {
		text := fmt.Sprintf("call %d", i)
		da, err := timedCall(ctx, anchor, text, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("anchor: %w", err)
		}
		dw, err := timedCall(ctx, weft, text, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("weft: %w", err)
		}
		if i >= warmup {
			a, w = append(a, da), append(w, dw)
		}
	}
	return a.Sorted(), w.Sorted(), nil
}

// timeConcurrent runs rounds of turns calls at once, each of the server
// spending ms, alternating the ways round by round; it returns every
// call's latency, sorted, per way.
func timeConcurrent(ctx context.Context, anchor, weft toolsCall, turns, rounds, ms int) (kit.Latencies, kit.Latencies, error) {
	burst := func(call toolsCall, round int) (kit.Latencies, error) {
		lat := make(kit.Latencies, turns)
		errs := make([]error, turns)
		var wg sync.WaitGroup
		for i := range turns {
			wg.Go(func() { lat[i], errs[i] = timedCall(ctx, call, fmt.Sprintf("turn %d.%d", round, i), ms) })
		}
		wg.Wait()
		return lat, errors.Join(errs...)
	}
	var a, w kit.Latencies
	for r := range rounds + 1 { // the first round warms up
		la, err := burst(anchor, r)
		if err != nil {
			return nil, nil, fmt.Errorf("anchor: %w", err)
		}
		lw, err := burst(weft, r)
		if err != nil {
			return nil, nil, fmt.Errorf("weft: %w", err)
		}
		if r > 0 {
			a, w = append(a, la...), append(w, lw...)
		}
	}
	return a.Sorted(), w.Sorted(), nil
}
