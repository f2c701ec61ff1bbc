package console_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// update rewrites the screenshots under docs/ (go test -run TestBrowser
// ./internal/console -args -update).
var update = flag.Bool("update", false, "rewrite docs/console-threads.png and docs/console-thread.png")

// browser starts headless Chromium. Without it the test skips, except
// under CI=true, where a missing browser is a failure: CI installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium package")
		}
		t.Skip("no chromium on PATH (apt-get install chromium); under CI=true this fails")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// TestBrowser drives the console in a real browser: log in, filter the
// list, open a thread, see a stitch written by another connection appear
// without a reload (a script in it shown as text, never run), and abort
// the running thread.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	g := newRig(t)
	watched := g.thread(t, "Deploy the cache layer to staging", thread.PlatformDiscord, thread.StatusRunning)
	g.thread(t, "Why does login fail on Safari?", thread.PlatformLinear, thread.StatusWaiting)
	g.thread(t, "Summarise yesterday's incidents", "", thread.StatusFailed)
	g.thread(t, "Rotate the staging database password", thread.PlatformDiscord, thread.StatusCompleted)
	g.thread(t, "Reindex the search cluster", "", thread.StatusRunning)
	_, err := g.store.Pool().Exec(context.Background(), `UPDATE threads SET last_activity_at = now() - interval '10 minutes'
		WHERE goal = 'Reindex the search cluster'`)
	require.NoError(t, err, "its turn's replica died ten minutes ago")
	for _, s := range []thread.Stitch{
		{Type: thread.StitchAgentThought, Content: "Checking which services read the cache before deploying."},
		{Type: thread.StitchLLMCall, Content: "I will look up the deploy runbook first.", Model: "gpt-4o-mini",
			InputTokens: 1832, OutputTokens: 96, Latency: 840 * time.Millisecond,
			LLMRequest:  []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Deploy the cache layer to staging"}]}`),
			LLMResponse: []byte(`{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"read_memory"}}]}}]}`)},
		{Type: thread.StitchToolCall, ToolName: "read_memory", ToolInput: []byte(`{"label":"runbooks"}`),
			ToolOutput: []byte(`{"content":"Staging deploys go through the blue/green switch."}`)},
	} {
		s.ThreadID = watched.ID
		_, err = g.store.AppendStitch(context.Background(), s)
		require.NoError(t, err)
	}

	base := g.srv.URL + "/console"
	goals := func() []string {
		t.Helper()
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#threads td.goal")].map(e => e.textContent)`))
		require.NoError(t, err)
		return rows
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("threads")),
	), "log in")
	require.Len(t, goals(), 5)
	g.screenshot(ctx, t, "console-threads.png")

	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("f-platform"), "discord")))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("f-apply")))
	require.NoError(t, err, "filter")
	require.ElementsMatch(t, []string{"Deploy the cache layer to staging", "Rotate the staging database password"}, goals())

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[text()="Deploy the cache layer to staging"]`),
		chromedp.WaitVisible(chromedp.ID("timeline")),
		chromedp.WaitVisible(chromedp.ID("s-5")),
	), "open the thread")
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live").textContent.endsWith(": on")`))
	require.NoError(t, err, "the live timeline connects")

	// Another connection writes a Discord message carrying a script.
	const evil = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"> is this safe?`
	_, err = g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: watched.ID, Type: thread.StitchDiscordMessage,
		Content: evil, Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(),
		Author: &thread.Author{ID: dbtest.Snowflake(), Name: "mallory"}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("s-6"))), "the stitch appears without a reload")
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#s-6 .text")))
	require.NoError(t, err)
	require.Equal(t, evil, text, "the message shows as text")
	require.NoError(t, chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond))) // time for an injected handler to run, were there one
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	require.NotEqual(t, "pwned", title)
	elems, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#timeline script, #timeline img").length`))
	require.NoError(t, err)
	require.Zero(t, elems, "no element came out of the message")
	g.screenshot(ctx, t, "console-thread.png")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#abort summary")),
		chromedp.Click(chromedp.ID("abort-confirm")),
		chromedp.WaitNotPresent(chromedp.ID("abort")),
	), "abort")
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status")))
	require.NoError(t, err)
	require.Equal(t, "aborted", status, "the page shows the thread aborted")
	th, err := g.store.Thread(context.Background(), watched.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusAborted, th.Status)
}

// screenshot saves the page under docs/ when -update is given.
func (g *rig) screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if !*update {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644))
}
