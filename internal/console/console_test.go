package console_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/console"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestOffWithoutToken(t *testing.T) {
	c := console.New(console.Deps{Logger: logtest.New(t), Store: dbtest.NewStore(t)})
	for _, path := range []string{"/console/", "/console/login", "/console/login?token=x", "/console/ops"} {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, path)
	}
}

// csrfIn reads the CSRF field of a page's form.
var csrfIn = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func formCSRF(t *testing.T, body string) string {
	t.Helper()
	m := csrfIn.FindStringSubmatch(body)
	require.NotNil(t, m, "a form with a CSRF field")
	return m[1]
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	resp, err := c.PostForm(u, form)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp
}

// login logs c in through the form and returns the session's CSRF token.
func login(t *testing.T, g *rig, c *http.Client) string {
	t.Helper()
	_, page := get(t, c, g.srv.URL+"/console/login")
	resp := post(t, c, g.srv.URL+"/console/login", url.Values{"csrf": {formCSRF(t, page)}, "token": {token}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = get(t, c, g.srv.URL+"/console/")
	return formCSRF(t, page)
}

func TestLogin(t *testing.T) {
	g := newRig(t)
	base := g.srv.URL + "/console"

	t.Run("PagesNeedASession", func(t *testing.T) {
		c := client(t)
		resp, _ := get(t, c, base+"/")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/console/login", resp.Header.Get("Location"))
		resp, _ = get(t, c, base+"/threads/"+thread.NewID().String()+"/events")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, http.StatusUnauthorized, post(t, c, base+"/logout", nil).StatusCode)
		// A forged cookie is no session.
		u, _ := url.Parse(base)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "weft_console", Value: "AAAA.BBBB", Path: "/console"}})
		resp, _ = get(t, c, base+"/")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	})

	t.Run("Form", func(t *testing.T) {
		c := client(t)
		resp, _ := get(t, c, base+"/login")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, http.StatusForbidden, post(t, c, base+"/login", url.Values{"token": {token}}).StatusCode, "no CSRF field")
		_, page := get(t, c, base+"/login")
		require.Equal(t, http.StatusUnauthorized, post(t, c, base+"/login", url.Values{"csrf": {formCSRF(t, page)}, "token": {"wrong"}}).StatusCode)
		_, page = get(t, c, base+"/login")
		resp = post(t, c, base+"/login", url.Values{"csrf": {formCSRF(t, page)}, "token": {token}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/console/", resp.Header.Get("Location"))
		var session *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "weft_console" {
				session = ck
			}
		}
		require.NotNil(t, session)
		require.True(t, session.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, session.SameSite)
		require.False(t, session.Secure, "plain HTTP")
		resp, _ = get(t, c, base+"/")
		require.Equal(t, http.StatusOK, resp.StatusCode)

		// Logging out needs the CSRF token, then ends the session.
		_, page = get(t, c, base+"/")
		require.Equal(t, http.StatusForbidden, post(t, c, base+"/logout", nil).StatusCode)
		require.Equal(t, http.StatusSeeOther, post(t, c, base+"/logout", url.Values{"csrf": {formCSRF(t, page)}}).StatusCode)
		resp, _ = get(t, c, base+"/")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	})

	t.Run("Link", func(t *testing.T) {
		c := client(t)
		resp, _ := get(t, c, base+"/login?token=wrong")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		resp, _ = get(t, c, base+"/login?token="+url.QueryEscape(token))
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/console/", resp.Header.Get("Location"))
		require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
		resp, _ = get(t, c, base+"/")
		require.Equal(t, http.StatusOK, resp.StatusCode)
	})

	t.Run("SecureBehindTLS", func(t *testing.T) {
		req, err := http.NewRequest("GET", base+"/login?token="+url.QueryEscape(token), nil)
		require.NoError(t, err)
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := client(t).Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.NotEmpty(t, resp.Cookies())
		for _, ck := range resp.Cookies() {
			require.True(t, ck.Secure, ck.Name)
		}
	})
}

func TestHeaders(t *testing.T) {
	g := newRig(t)
	c := client(t)
	login(t, g, c)
	resp, _ := get(t, c, g.srv.URL+"/console/")
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self'")
	require.Contains(t, csp, "default-src 'none'")
	require.NotContains(t, csp, "unsafe")
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
}

func TestAbortNeedsCSRF(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "a running thread", thread.PlatformDiscord, thread.StatusRunning)
	c := client(t)
	csrf := login(t, g, c)
	abort := g.srv.URL + "/console/threads/" + th.ID.String() + "/abort"

	require.Equal(t, http.StatusForbidden, post(t, c, abort, nil).StatusCode)
	require.Equal(t, http.StatusForbidden, post(t, c, abort, url.Values{"csrf": {"forged"}}).StatusCode)
	got, err := g.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusRunning, got.Status)

	resp := post(t, c, abort, url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	got, err = g.store.Thread(context.Background(), th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusAborted, got.Status)
}

func TestEscaping(t *testing.T) {
	g := newRig(t)
	const evil = `<script>alert(1)</script>`
	th := g.thread(t, "goal "+evil, thread.PlatformDiscord, thread.StatusRunning)
	_, err := g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage,
		Content: evil, Source: thread.PlatformDiscord, ExternalID: dbtest.Snowflake(),
		Author: &thread.Author{ID: dbtest.Snowflake(), Name: `"><script>alert(2)</script>`}})
	require.NoError(t, err)
	c := client(t)
	login(t, g, c)
	for _, path := range []string{"/console/", "/console/threads/" + th.ID.String(), "/console/?q=" + url.QueryEscape(evil)} {
		resp, page := get(t, c, g.srv.URL+path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.NotContains(t, page, "<script>alert", path)
		require.Contains(t, page, "&lt;script&gt;alert(", path)
	}
}

func TestPages(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "find the flaky test", thread.PlatformLinear, thread.StatusRunning)
	_, err := g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchLLMCall,
		Model: "gpt-4o-mini", InputTokens: 10, OutputTokens: 5, Content: "looking",
		LLMRequest: []byte(`{"messages":[]}`), LLMResponse: []byte(`{"choices":[]}`)})
	require.NoError(t, err)
	for range 3 {
		g.thread(t, "other work", "", thread.StatusCompleted)
	}
	c := client(t)
	login(t, g, c)
	base := g.srv.URL + "/console"

	_, page := get(t, c, base+"/ops")
	require.Contains(t, page, "<svg", "the usage chart")
	require.Contains(t, page, "gpt-4o-mini")
	for _, v := range []string{"thread_overview", "stuck_threads", "delivery_backlog", "llm_usage_daily"} {
		require.Contains(t, page, `id="v-`+v+`"`)
	}

	_, page = get(t, c, base+"/?q=flaky")
	require.Contains(t, page, "find the flaky test")
	require.NotContains(t, page, "other work")
	_, page = get(t, c, base+"/?status=completed")
	require.Equal(t, 3, strings.Count(page, "other work"))
	_, page = get(t, c, base+"/?platform=linear")
	require.Contains(t, page, "find the flaky test")
	require.NotContains(t, page, "other work")

	_, page = get(t, c, base+"/threads/"+th.ID.String())
	m := regexp.MustCompile(`data-src="([^"]+/llm)"`).FindStringSubmatch(page)
	require.NotNil(t, m, "the LLM call's bodies load on demand")
	_, body := get(t, c, g.srv.URL+m[1])
	require.JSONEq(t, `{"request":{"messages":[]},"response":{"choices":[]}}`, body)

	resp, _ := get(t, c, base+"/threads/"+thread.NewID().String())
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestSlackThreads checks a Slack thread is filtered, badged and shown
// attached as Discord and Linear ones are, not as attached nowhere.
func TestSlackThreads(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "answer in slack", thread.PlatformSlack, thread.StatusRunning)
	g.thread(t, "answer over the api", "", thread.StatusRunning)
	c := client(t)
	login(t, g, c)
	base := g.srv.URL + "/console"

	_, page := get(t, c, base+"/?platform=slack")
	require.Contains(t, page, "answer in slack")
	require.NotContains(t, page, "answer over the api")
	require.Contains(t, page, `<span class="plat slack">Slack</span>`)
	require.Contains(t, page, `<option value="slack" selected`)
	_, page = get(t, c, base+"/?platform=api")
	require.Contains(t, page, "answer over the api")
	require.NotContains(t, page, "answer in slack")

	_, page = get(t, c, base+"/threads/"+th.ID.String())
	require.Contains(t, page, `<span class="plat slack">Slack</span>`)
	require.Contains(t, page, "C1")
}

func TestPaging(t *testing.T) {
	g := newRig(t)
	for range console.PageSize + 5 {
		g.thread(t, "one of many", "", thread.StatusPending)
	}
	c := client(t)
	login(t, g, c)
	_, page := get(t, c, g.srv.URL+"/console/")
	require.Equal(t, console.PageSize, strings.Count(page, "one of many"))
	m := regexp.MustCompile(`href="([^"]+)" id="next"`).FindStringSubmatch(page)
	require.NotNil(t, m)
	_, page = get(t, c, g.srv.URL+strings.ReplaceAll(m[1], "&amp;", "&"))
	require.Equal(t, 5, strings.Count(page, "one of many"))
	require.NotContains(t, page, `id="next"`)
}

// TestLive reads the event stream as a browser would: a stitch another
// connection appends arrives as an event, and the watch ends with the
// stream.
func TestLive(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "watch me", thread.PlatformDiscord, thread.StatusRunning)
	c := client(t)
	login(t, g, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/console/threads/"+th.ID.String()+"/events?after=2", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := bufio.NewReader(resp.Body)
	next := func() (event, data string) {
		t.Helper()
		var lines []string
		for {
			line, err := events.ReadString('\n')
			require.NoError(t, err)
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && event != "":
				return event, strings.Join(lines, "\n")
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				lines = append(lines, strings.TrimPrefix(line, "data: "))
			}
		}
	}
	ev, data := next()
	require.Equal(t, "status", ev, "caught up: nothing after #2")
	require.Equal(t, "running true", data)

	_, err = g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchAgentThought, Content: "a new thought"})
	require.NoError(t, err)
	ev, data = next()
	require.Equal(t, "stitch", ev)
	require.Contains(t, data, `id="s-3"`)
	require.Contains(t, data, "a new thought")
	ev, _ = next()
	require.Equal(t, "status", ev)

	var watchers int
	require.NoError(t, g.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM stitch_watchers`).Scan(&watchers))
	require.Equal(t, 1, watchers)
	cancel()
	require.Eventually(t, func() bool {
		require.NoError(t, g.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM stitch_watchers`).Scan(&watchers))
		return watchers == 0
	}, 10*time.Second, 20*time.Millisecond, "the watch ends with the stream")
}

// TestGitHubThreads checks a GitHub thread is filtered, badged and shown
// attached, with a link out to its issue, pull request or review thread.
func TestGitHubThreads(t *testing.T) {
	g := newRig(t)
	ctx := context.Background()
	att := &thread.GitHubAttachment{InstallationID: 7, AccountID: 70, RepoID: 700, Owner: "acme", Repo: "api", Number: 12, CreatedBy: "bob"}
	issue, err := thread.NewBuilder(nil).WithGoal("answer on github").InteractiveGitHub(att).Build(ctx, g.store)
	require.NoError(t, err)
	review, err := thread.NewBuilder(nil).WithGoal("answer in review").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: 7,
		AccountID: 70, RepoID: 700, Owner: "acme", Repo: "api", Number: 13, PullRequest: true, ReviewRoot: 99, CreatedBy: "bob"}).Build(ctx, g.store)
	require.NoError(t, err)
	g.thread(t, "answer in slack", thread.PlatformSlack, thread.StatusRunning)
	c := client(t)
	login(t, g, c)
	base := g.srv.URL + "/console"

	_, page := get(t, c, base+"/?platform=github")
	require.Contains(t, page, "answer on github")
	require.Contains(t, page, "answer in review")
	require.NotContains(t, page, "answer in slack")
	require.Contains(t, page, `<span class="plat github">GitHub</span>`)
	require.Contains(t, page, `<option value="github" selected`)

	_, page = get(t, c, base+"/threads/"+issue.ID.String())
	require.Contains(t, page, `<span class="plat github">GitHub</span>`)
	require.Contains(t, page, `href="https://github.com/acme/api/issues/12"`)
	require.Contains(t, page, "acme/api#12")
	_, page = get(t, c, base+"/threads/"+review.ID.String())
	require.Contains(t, page, `href="https://github.com/acme/api/pull/13#discussion_r99"`)
	require.Contains(t, page, "review thread 99")
}

// The thread page shows a request for approval with Approve / Deny; a
// decision needs the session's CSRF token, the first one wins, and a
// second is told who decided.
func TestApprovalNeedsCSRF(t *testing.T) {
	g := newRig(t)
	ctx := context.Background()
	th := g.thread(t, "a thread asking", thread.PlatformDiscord, thread.StatusRunning)
	a := dbtest.PendingApproval(ctx, t, g.store, th.ID)
	c := client(t)
	csrf := login(t, g, c)
	_, page := get(t, c, g.srv.URL+"/console/threads/"+th.ID.String())
	require.Contains(t, page, `id="approval-`+a.ID.String()+`"`)
	require.Contains(t, page, "write_file")
	require.Contains(t, page, `value="approve"`)
	require.Contains(t, page, `&#34;path&#34;: &#34;notes.txt&#34;`, "the arguments, formatted")

	decide := g.srv.URL + "/console/threads/" + th.ID.String() + "/approvals/" + a.ID.String()
	require.Equal(t, http.StatusForbidden, post(t, c, decide, url.Values{"decision": {"approve"}}).StatusCode)
	require.Equal(t, http.StatusForbidden, post(t, c, decide, url.Values{"decision": {"approve"}, "csrf": {"forged"}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, post(t, c, decide, url.Values{"decision": {"maybe"}, "csrf": {csrf}}).StatusCode)
	got, err := g.store.Approval(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalPending, got.Status)

	require.Equal(t, http.StatusSeeOther, post(t, c, decide, url.Values{"decision": {"deny"}, "reason": {"wrong file"}, "csrf": {csrf}}).StatusCode)
	got, err = g.store.Approval(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalDenied, got.Status)
	require.Equal(t, "console", got.DecidedVia)
	require.Equal(t, "wrong file", got.Reason)
	resp := post(t, c, decide, url.Values{"decision": {"approve"}, "csrf": {csrf}})
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	_, page = get(t, c, g.srv.URL+"/console/threads/"+th.ID.String())
	require.Contains(t, page, "denied by an operator (console): wrong file")
}

// A call whose outcome weft could not know is marked on the timeline.
func TestUnknownOutcomeIsMarked(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "a thread that crashed", thread.PlatformDiscord, thread.StatusRunning)
	_, err := g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchToolCall,
		Content: "error: the outcome of this call is unknown", ToolName: "mcp__files__write_file", ToolError: true,
		Metadata: thread.Meta{ToolCallID: "c1", Unknown: true}.JSON()})
	require.NoError(t, err)
	c := client(t)
	login(t, g, c)
	_, page := get(t, c, g.srv.URL+"/console/threads/"+th.ID.String())
	require.Contains(t, page, `<span class="mark error unknown"`)
}

// TestToolImagesShownBySize: the thread page names a tool's pictures by
// type and size; their bytes, kept in the stitch for the model, are not
// put in the page.
func TestToolImagesShownBySize(t *testing.T) {
	g := newRig(t)
	th := g.thread(t, "a thread that drew", thread.PlatformDiscord, thread.StatusRunning)
	png := []byte("\x89PNG-a-picture-of-a-chart")
	_, err := g.store.AppendStitch(context.Background(), thread.Stitch{ThreadID: th.ID, Type: thread.StitchToolCall,
		Content: "[image image/png, 25 bytes, attached]", ToolName: "mcp__charts__draw",
		Metadata: thread.Meta{ToolCallID: "c1", Images: []thread.Image{{MediaType: "image/png", Data: png}}}.JSON()})
	require.NoError(t, err)
	c := client(t)
	login(t, g, c)
	_, page := get(t, c, g.srv.URL+"/console/threads/"+th.ID.String())
	require.Contains(t, page, "image/png, 25 bytes")
	require.Contains(t, page, "c1")
	require.NotContains(t, page, base64.StdEncoding.EncodeToString(png))
}
