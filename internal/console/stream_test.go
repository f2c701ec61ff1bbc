package console_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
)

// TestBrowserStreamsAnswer opens a thread while its answer streams: the
// page shows the text as it grows (markup in it as text), then the stitch
// that records the answer takes its place.
func TestBrowserStreamsAnswer(t *testing.T) {
	ctx := browser(t)
	g := newRig(t)
	th := g.thread(t, "Why is the build red?", thread.PlatformDiscord, thread.StatusRunning)

	base := g.srv.URL + "/console"
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("threads")),
		chromedp.Navigate(base+"/threads/"+th.ID.String()),
		chromedp.WaitVisible(chromedp.ID("timeline")),
	), "log in and open the thread")
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live").textContent.endsWith(": on")`))
	require.NoError(t, err, "the live timeline connects")

	w := partial.New(partial.Deps{Store: g.store, Logger: logtest.New(t), Interval: time.Millisecond})
	answer := w.Open(context.Background(), th, th.StitchCount)
	shows := func(want string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const e = document.querySelector("#partial .text"); return !!e && e.textContent === `+jsString(want)+` })()`))
		require.NoError(t, err, "the page shows %q", want)
	}
	answer.Text("The build is red")
	shows("The build is red")
	const grown = "The build is red because <b>flaky_test</b> timed out."
	answer.Text(grown)
	shows(grown)
	bold, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#partial b").length`))
	require.NoError(t, err)
	require.Zero(t, bold, "the partial text is text, never markup")

	st, err := g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall, Content: grown, Model: "m"})
	require.NoError(t, err)
	answer.Close()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("s-"+itoa(st.Seq))),
		chromedp.WaitNotPresent(chromedp.ID("partial")),
	), "the recorded answer replaces the partial text")
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#s-"+itoa(st.Seq)+" .text")))
	require.NoError(t, err)
	require.Equal(t, grown, text)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
