package githubtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// auth says how a route is authenticated.
type auth int

const (
	authApp          auth = iota + 1 // the app JWT
	authInstallation                 // an installation token
)

// routes are the endpoints weft calls, as GitHub's REST reference names
// them, and nothing else: anything else is GitHub's 404.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	add := func(method, path string, a auth, h func(*request)) {
		mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
			s.serve(w, r, method+" "+path, a, h)
		})
	}
	add("POST", "/app/installations/{installation_id}/access_tokens", authApp, s.createToken)
	add("GET", "/installation/repositories", authInstallation, s.listInstallationRepos)
	add("GET", "/repos/{owner}/{repo}/issues/{issue_number}", authInstallation, s.getIssue)
	add("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", authInstallation, s.listComments)
	add("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", authInstallation, s.createComment)
	add("POST", "/repos/{owner}/{repo}/issues/{issue_number}/reactions", authInstallation, s.reactIssue)
	add("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", authInstallation, s.reactComment(false))
	add("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", authInstallation, s.getPull)
	add("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", authInstallation, s.listFiles)
	add("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", authInstallation, s.listReviewComments)
	add("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies", authInstallation, s.createReply)
	add("POST", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions", authInstallation, s.reactComment(true))
	add("GET", "/search/issues", authInstallation, s.searchIssues)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.checkCall(Call{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header, Body: body})
		s.record(r, "", body, http.StatusNotFound, 0, s.Now())
		writeError(w, http.StatusNotFound, "Not Found")
	})
	return mux
}

// request is one authenticated request being answered.
type request struct {
	w    http.ResponseWriter
	r    *http.Request
	body []byte
	inst *installation // the token's installation; nil for the app JWT
}

// status records what a handler answered, for the call log.
type status struct {
	http.ResponseWriter
	code int
}

func (s *status) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *status) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets fakekit's Dropped hijack the connection.
func (s *status) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *Server) serve(w http.ResponseWriter, r *http.Request, route string, a auth, h func(*request)) {
	at := s.Now()
	body, _ := io.ReadAll(r.Body)
	sw := &status{ResponseWriter: w}
	var instID int64
	defer func() { s.record(r, route, body, sw.code, instID, at) }()
	req := &request{w: sw, r: r, body: body}
	if !s.checkCall(Call{Route: route, Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header, Body: body}) {
		writeError(sw, http.StatusUnprocessableEntity, "Invalid request.")
		return
	}
	switch a {
	case authApp:
		if msg := s.verifyJWT(r.Header.Get("Authorization")); msg != "" {
			writeError(sw, http.StatusUnauthorized, msg)
			return
		}
	case authInstallation:
		in, ok := s.tokenInstallation(r.Header.Get("Authorization"))
		if !ok {
			writeError(sw, http.StatusUnauthorized, "Bad credentials")
			return
		}
		req.inst, instID = in, in.id
		if s.primaryLimited(sw, in) || s.secondaryLimited(sw, in) {
			return
		}
	}
	f, ok := s.Take(route)
	if !ok {
		h(req)
		return
	}
	fakekit.Serve(sw, r, f, func(w http.ResponseWriter) {
		rq := *req
		rq.w = w
		h(&rq)
	}, writeFault)
}

func (s *Server) record(r *http.Request, route string, body []byte, code int, inst int64, at time.Time) {
	s.calls.Add(Call{Route: route, Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(),
		Body: body, Status: code, Installation: inst, At: at, Answered: s.Now()})
}

// secondaryLimited answers as GitHub does while the installation is under
// a secondary rate limit (SecondaryLimit).
func (s *Server) secondaryLimited(w http.ResponseWriter, in *installation) bool {
	s.mu.Lock()
	now := s.clock()
	until, status := in.secondaryUntil, in.secondaryStatus
	s.mu.Unlock()
	if !now.Before(until) {
		return false
	}
	writeFault(w, fakekit.Fault{Status: status, RetryAfter: until.Sub(now)})
	return true
}

// primaryLimited counts a request against the installation's primary
// rate limit, an hour's window from its first request, sets GitHub's
// rate-limit headers, and answers as GitHub does when it is used up.
func (s *Server) primaryLimited(w http.ResponseWriter, in *installation) bool {
	s.mu.Lock()
	now := s.clock()
	if in.window.IsZero() || !now.Before(in.window.Add(time.Hour)) {
		in.window, in.used = now, 0
	}
	reset := in.window.Add(time.Hour)
	limited := in.used >= in.limit
	if now.Before(in.limitedUntil) {
		limited, reset = true, in.limitedUntil
	}
	if !limited {
		in.used++
	}
	remaining := max(in.limit-in.used, 0)
	if limited {
		remaining = 0
	}
	limit, used := in.limit, in.used
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	if limited {
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "API rate limit exceeded for installation ID " + strconv.FormatInt(in.id, 10) + ".",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits",
		})
	}
	return limited
}

// issue is the request's issue in a repository the token may reach, or
// GitHub's 404 (GitHub hides what a token may not see).
func (s *Server) issue(q *request, param string) (*repo, *Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[strings.ToLower(q.r.PathValue("owner")+"/"+q.r.PathValue("repo"))]
	if !ok || !q.inst.repos[r.id] {
		writeError(q.w, http.StatusNotFound, "Not Found")
		return nil, nil, false
	}
	n, _ := strconv.Atoi(q.r.PathValue(param))
	is, ok := r.issues[n]
	if !ok || (param == "pull_number" && !is.PullRequest) {
		writeError(q.w, http.StatusNotFound, "Not Found")
		return nil, nil, false
	}
	return r, is, true
}

// page is the slice [lo, hi) of n items the request's page and per_page
// select, with GitHub's Link header set for the others.
func (s *Server) page(q *request, n int) (lo, hi int) {
	s.mu.Lock()
	most := s.pageSize
	s.mu.Unlock()
	per, _ := strconv.Atoi(q.r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100, most)
	p, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	p = max(p, 1)
	last := max((n+per-1)/per, 1)
	link := func(page int, rel string) string {
		u := *q.r.URL
		v := u.Query()
		v.Set("page", strconv.Itoa(page))
		u.RawQuery = v.Encode()
		return "<" + s.http.URL + u.RequestURI() + `>; rel="` + rel + `"`
	}
	var links []string
	if p < last {
		links = append(links, link(p+1, "next"), link(last, "last"))
	}
	if p > 1 {
		links = append(links, link(1, "first"), link(p-1, "prev"))
	}
	if len(links) > 0 {
		q.w.Header().Set("Link", strings.Join(links, ", "))
	}
	return min((p-1)*per, n), min(p*per, n)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// writeError is GitHub's error body.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(code)})
}
