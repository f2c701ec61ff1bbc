package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/thread"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return http.StripPrefix("/static", http.FileServerFS(sub))
}

// pages holds one template set per page, each with the shared layout and
// partials, so that pages may each define their own "content".
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"when": fmtTime,
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return ago(time.Since(t))
	},
	"pretty": prettyJSON,
	"ms":     func(d time.Duration) int64 { return d.Milliseconds() },
	// The tail of an id: a UUIDv7 begins with its time, shared by
	// threads made together.
	"short": func(id uuid.UUID) string { return id.String()[28:] },
	"clip": func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n]) + "…"
		}
		return s
	},
	"state": stateOf,
	"discordURL": func(d *thread.DiscordAttachment) string {
		return "https://discord.com/channels/" + url.PathEscape(d.GuildID) + "/" + url.PathEscape(d.DiscordThreadID)
	},
	"linearURL": func(l *thread.LinearAttachment) string {
		return "https://linear.app/issue/" + url.PathEscape(l.IssueIdentifier)
	},
	"githubURL": githubURL,
}

// githubURL is a GitHub conversation's page on github.com: its issue or
// pull request, or a review thread's first comment.
func githubURL(g *thread.GitHubAttachment) string {
	u := "https://github.com/" + url.PathEscape(g.Owner) + "/" + url.PathEscape(g.Repo)
	switch {
	case g.ReviewRoot != 0:
		return u + "/pull/" + strconv.Itoa(g.Number) + "#discussion_r" + strconv.FormatInt(g.ReviewRoot, 10)
	case g.PullRequest:
		return u + "/pull/" + strconv.Itoa(g.Number)
	}
	return u + "/issues/" + strconv.Itoa(g.Number)
}

func parsePages() *pages {
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range []string{"login", "threads", "thread", "ops", "organisations"} {
		p.byName[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/stitch.html", "templates/"+name+".html"))
	}
	return p
}

// render executes a page into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	c.renderSized(w, r, status, name, data, 16<<10)
}

// renderSized renders into a buffer grown to size up front: a long
// timeline would otherwise copy its page over and over as it grows.
func (c *Console) renderSized(w http.ResponseWriter, r *http.Request, status int, name string, data any, size int) {
	var buf bytes.Buffer
	buf.Grow(size)
	if err := c.pages.byName[name].ExecuteTemplate(&buf, "layout", pageData{Page: name, CSRF: csrfToken(r.Context()), Data: data}); err != nil {
		c.fail(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// pageData is what the layout sees; Data is the page's own.
type pageData struct {
	Page string
	CSRF string
	Data any
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// state is how the list shows where a thread is: the one word an operator
// scans for, and the class that colours it.
type state struct {
	Label, Class string
}

func stateOf(t db.ConsoleThread) state {
	switch {
	case t.LeaseLapsed:
		return state{"stuck: lease lapsed", "stuck"}
	case t.Unanswered:
		return state{"stuck: unanswered input", "stuck"}
	case t.Stranded:
		return state{"stuck: stranded post", "stuck"}
	}
	switch t.Status {
	case thread.StatusWaiting:
		if t.WaitingReason == thread.WaitingClarification {
			return state{"waiting on human", "human"}
		}
		return state{"idle", "idle"}
	case thread.StatusRunning:
		return state{"running", "running"}
	case thread.StatusPending:
		return state{"pending", "running"}
	case thread.StatusFailed:
		return state{"failed", "failed"}
	}
	return state{string(t.Status), "done"}
}

// listView is the threads page.
type listView struct {
	Threads []db.ConsoleThread
	Query   listQuery
	// Next links the next page (empty on the last), First the first
	// (empty on it).
	Next, First template.URL
}

// The options the filters offer.
func (listView) StatusOptions() []thread.Status     { return thread.Statuses }
func (listView) TypeOptions() []thread.Type         { return typeOptions }
func (listView) PlatformOptions() []thread.Platform { return platformOptions }

type listQuery struct {
	Status, Type, Platform, Q string
	Stuck                     bool
}

func (q listQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "type": q.Type, "platform": q.Platform, "q": q.Q} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Stuck {
		v.Set("stuck", "1")
	}
	return v
}

// Options the filters offer.
var (
	typeOptions     = []thread.Type{thread.TypeInteractive, thread.TypeAutonomous}
	platformOptions = []thread.Platform{thread.PlatformLinear, thread.PlatformDiscord, thread.PlatformSlack, thread.PlatformGitHub, thread.PlatformAPI}
)

// PageSize is how many threads a page of the list shows.
const PageSize = 50

func (c *Console) threadList(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	q := listQuery{Status: in.Get("status"), Type: in.Get("type"), Platform: in.Get("platform"),
		Q: strings.TrimSpace(in.Get("q")), Stuck: in.Get("stuck") != ""}
	f := db.ConsoleFilter{Search: q.Q, Stuck: q.Stuck, Limit: PageSize + 1, Grace: c.d.Grace}
	if s := thread.Status(q.Status); s.Valid() {
		f.Status = s
	}
	if t := thread.Type(q.Type); t.Valid() {
		f.Type = t
	}
	for _, p := range platformOptions {
		if string(p) == q.Platform {
			f.Platform = p
		}
	}
	if at, id, ok := parseCursor(in.Get("after")); ok {
		f.AfterUpdated, f.AfterID = at, id
	}
	threads, err := c.d.Store.ConsoleThreads(r.Context(), f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v := listView{Threads: threads, Query: q}
	if !f.AfterUpdated.IsZero() {
		v.First = listURL(q.values())
	}
	if len(threads) > PageSize {
		v.Threads = threads[:PageSize]
		last := v.Threads[PageSize-1]
		next := q.values()
		next.Set("after", last.UpdatedAt.UTC().Format(time.RFC3339Nano)+"_"+last.ID.String())
		v.Next = listURL(next)
	}
	c.render(w, r, http.StatusOK, "threads", v)
}

func listURL(v url.Values) template.URL {
	if len(v) == 0 {
		return Prefix + "/"
	}
	return template.URL(Prefix + "/?" + v.Encode()) // encoded: safe in an href
}

func parseCursor(s string) (time.Time, uuid.UUID, bool) {
	at, id, ok := strings.Cut(s, "_")
	if !ok {
		return time.Time{}, uuid.Nil, false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, uuid.Nil, false
	}
	u, err := uuid.Parse(id)
	return t, u, err == nil
}

// TimelineWindow is how many stitches a thread page shows at once: the
// newest, with a link to the earlier ones.
const TimelineWindow = 1000

// threadView is the thread page.
type threadView struct {
	Thread    *thread.Thread
	Abortable bool
	Discord   *thread.DiscordAttachment
	Linear    *thread.LinearAttachment
	Slack     *thread.SlackAttachment
	GitHub    *thread.GitHubAttachment
	Outbox    []thread.Outbox
	Approvals []approvalView
	Stitches  []stitchView
	// From is the position the timeline starts after; Earlier links the
	// window before it (empty at the start).
	From    int64
	Earlier template.URL
	Last    int64 // the newest stitch shown, where live updates continue
}

func (c *Console) threadPage(w http.ResponseWriter, r *http.Request) {
	id, ok := threadID(r, "id")
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ctx := r.Context()
	th, err := c.d.Store.Thread(ctx, id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v := threadView{Thread: th, Abortable: thread.CanTransition(th.Status, thread.StatusAborted)}
	v.From = max(th.StitchCount-TimelineWindow, 0)
	if s := r.URL.Query().Get("from"); s != "" {
		if _, err := fmt.Sscan(s, &v.From); err != nil || v.From < 0 {
			v.From = 0
		}
	}
	if v.From > 0 {
		v.Earlier = template.URL(fmt.Sprintf("%s/threads/%s?from=%d", Prefix, id, max(v.From-TimelineWindow, 0)))
	}
	if v.Discord, err = c.d.Store.DiscordAttachment(ctx, id); err != nil && !isNotFound(err) {
		c.fail(w, r, err)
		return
	}
	if v.Linear, err = c.d.Store.LinearAttachment(ctx, id); err != nil && !isNotFound(err) {
		c.fail(w, r, err)
		return
	}
	if v.Slack, err = c.d.Store.SlackAttachment(ctx, id); err != nil && !isNotFound(err) {
		c.fail(w, r, err)
		return
	}
	if v.GitHub, err = c.d.Store.GitHubAttachment(ctx, id); err != nil && !isNotFound(err) {
		c.fail(w, r, err)
		return
	}
	if v.Outbox, err = c.d.Store.ThreadOutbox(ctx, id); err != nil {
		c.fail(w, r, err)
		return
	}
	if c.d.Approvals != nil {
		list, err := c.d.Approvals.List(ctx, id)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		for i := range list {
			v.Approvals = append(v.Approvals, approvalView{Approval: &list[i], Decision: approval.Describe(&list[i])})
		}
	}
	stitches, err := c.d.Store.ConsoleStitches(ctx, id, v.From, TimelineWindow)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Stitches = make([]stitchView, len(stitches))
	for i := range stitches {
		v.Stitches[i] = viewStitch(id, &stitches[i])
	}
	v.Last = v.From
	if n := len(v.Stitches); n > 0 {
		v.Last = v.Stitches[n-1].Seq
	}
	c.renderSized(w, r, http.StatusOK, "thread", v, 16<<10+len(v.Stitches)<<10)
}

// llmBodies answers an LLM call's request and response, which the
// timeline leaves out until an operator opens them.
func (c *Console) llmBodies(w http.ResponseWriter, r *http.Request) {
	id, ok1 := threadID(r, "id")
	sid, ok2 := threadID(r, "sid")
	if !ok1 || !ok2 {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	req, resp, err := c.d.Store.LLMBodies(r.Context(), id, sid)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]json.RawMessage{"request": orNull(req), "response": orNull(resp)})
}

func orNull(j json.RawMessage) json.RawMessage {
	if len(j) == 0 {
		return json.RawMessage("null")
	}
	return j
}

// abortReason is the text the stop leaves on the thread's surface.
const abortReason = "Stopped by an operator from the console."

func (c *Console) abort(w http.ResponseWriter, r *http.Request) {
	id, ok := threadID(r, "id")
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if _, err := c.d.Aborter.Abort(r.Context(), id, abortReason); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"/threads/"+id.String(), http.StatusSeeOther)
}

// approvalView is a request for approval on the thread page.
type approvalView struct {
	*thread.Approval
	// Decision says what was decided, by whom, once it is.
	Decision string
}

// Pending reports whether the request waits for a decision.
func (a approvalView) Pending() bool { return a.Status == thread.ApprovalPending }

// Args is the call's arguments as people read them.
func (a approvalView) Args() string { return prettyJSON(a.Arguments) }

// maxConsoleReason bounds a decision's reason typed in the console.
const maxConsoleReason = 2000

// decide decides a request for approval as the logged-in operator: the
// first decision wins, and a later one is told who decided (409).
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	id, ok1 := threadID(r, "id")
	aid, ok2 := threadID(r, "aid")
	if !ok1 || !ok2 || c.d.Approvals == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	d := thread.Decision(r.PostFormValue("decision"))
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if !d.Valid() || len(reason) > maxConsoleReason || strings.ContainsRune(reason, 0) {
		http.Error(w, "decision must be approve or deny, with a reason of at most 2000 bytes", http.StatusBadRequest)
		return
	}
	_, err := c.d.Approvals.Decide(r.Context(), approval.Request{ApprovalID: aid, ThreadID: id, Decision: d, Reason: reason,
		By: approval.Who{ID: "console", Name: "an operator", Via: approval.ViaConsole}})
	var decided *approval.DecidedError
	if errors.As(err, &decided) {
		http.Error(w, "this request was "+decided.Error(), http.StatusConflict)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"/threads/"+id.String(), http.StatusSeeOther)
}

// opsView is the ops page.
type opsView struct {
	Views      []namedView
	Backlog    []thread.Outbox
	Deliveries []db.Delivery
	Outcomes   map[thread.InboundOutcome]int
	Chart      chart
	Usage      []db.LLMUsage
}

type namedView struct {
	Name string
	Rows *db.ViewRows
}

// Bounds of the ops page's tables.
const (
	opsRows   = 100
	usageDays = 14
)

func (c *Console) ops(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var v opsView
	for _, name := range db.Views() {
		rows, err := c.d.Store.View(ctx, name)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		v.Views = append(v.Views, namedView{Name: name, Rows: rows})
	}
	var err error
	if v.Backlog, err = c.d.Store.OutboxBacklog(ctx, opsRows); err != nil {
		c.fail(w, r, err)
		return
	}
	if v.Deliveries, err = c.d.Store.RecentDeliveries(ctx, opsRows); err != nil {
		c.fail(w, r, err)
		return
	}
	v.Outcomes = map[thread.InboundOutcome]int{}
	for _, d := range v.Deliveries {
		v.Outcomes[d.Outcome]++
	}
	since := time.Now().UTC().AddDate(0, 0, -(usageDays - 1)).Truncate(24 * time.Hour)
	if v.Usage, err = c.d.Store.LLMUsageSince(ctx, since); err != nil {
		c.fail(w, r, err)
		return
	}
	v.Chart = usageChart(v.Usage, since, usageDays)
	c.render(w, r, http.StatusOK, "ops", v)
}
