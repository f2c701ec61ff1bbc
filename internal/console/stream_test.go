package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// TestLivePartial reads the event stream as a browser would while an
// answer streams: partial events carry the text as JSON, and the text
// ends once the llm_call stitch was sent.
func TestLivePartial(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "stream me", thread.PlatformDiscord, thread.StatusRunning)
	c := client(t)
	login(t, g, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/console/threads/"+th.ID.String()+"/events?after="+itoa(th.StitchCount), nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	next := func() (event, data string) {
		t.Helper()
		for events.Scan() {
			line := events.Text()
			switch {
			case line == "" && event != "":
				return event, data
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the stream ended: %v", events.Err())
		return "", ""
	}
	ev, _ := next()
	require.Equal(t, "status", ev, "caught up")

	w := partial.New(partial.Deps{Store: g.store, Logger: logtest.New(t), Interval: time.Millisecond})
	answer := w.Open(context.Background(), th, th.StitchCount)
	answer.Text("It is <b>red</b>\nbecause")
	ev, data := next()
	require.Equal(t, "partial", ev)
	require.JSONEq(t, `{"after_seq":`+itoa(th.StitchCount)+`,"text":"It is \u003cb\u003ered\u003c/b\u003e\nbecause"}`, data)
	_, _ = next() // status

	_, err = g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall, Content: "It is red.", Model: "m"})
	require.NoError(t, err)
	answer.Close()
	var seen []string
	for !slices.Contains(seen, "stitch") || !slices.Contains(seen, "partial_end") {
		ev, _ := next()
		if ev != "status" {
			seen = append(seen, ev)
		}
	}
	require.Equal(t, []string{"stitch", "partial_end"}, seen)
}
