package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *Server) listInstallationRepos(q *request) {
	s.mu.Lock()
	var rs []*repo
	for _, r := range s.repos {
		if q.inst.repos[r.id] {
			rs = append(rs, r)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(rs, func(a, b *repo) int { return int(a.id - b.id) })
	lo, hi := s.page(q, len(rs))
	items := []any{}
	for _, r := range rs[lo:hi] {
		items = append(items, repoJSON(r))
	}
	writeJSON(q.w, http.StatusOK, map[string]any{"total_count": len(rs), "repository_selection": "selected", "repositories": items})
}

func (s *Server) getIssue(q *request) {
	r, is, ok := s.issue(q, "issue_number")
	if !ok {
		return
	}
	s.mu.Lock()
	v := issueJSON(r, is)
	s.mu.Unlock()
	writeJSON(q.w, http.StatusOK, v)
}

func (s *Server) listComments(q *request) {
	r, is, ok := s.issue(q, "issue_number")
	if !ok {
		return
	}
	s.mu.Lock()
	cs := slices.Clone(is.Comments)
	if since, err := time.Parse(time.RFC3339, q.r.URL.Query().Get("since")); err == nil {
		cs = slices.DeleteFunc(cs, func(c *Comment) bool { return c.UpdatedAt.Before(since) })
	}
	s.mu.Unlock()
	lo, hi := s.page(q, len(cs))
	items := []any{}
	s.mu.Lock()
	for _, c := range cs[lo:hi] {
		items = append(items, commentJSON(r, is, c))
	}
	s.mu.Unlock()
	writeJSON(q.w, http.StatusOK, items)
}

// commentBody is the body of a request that writes a comment.
type commentBody struct {
	Body *string `json:"body"`
}

// readBody decodes a comment's body as GitHub validates it: required, and
// at most 65,536 characters.
func readBody(q *request) (string, bool) {
	var b commentBody
	if err := json.Unmarshal(q.body, &b); err != nil {
		writeError(q.w, http.StatusBadRequest, "Problems parsing JSON")
		return "", false
	}
	if b.Body == nil {
		writeError(q.w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"body\" wasn't supplied.")
		return "", false
	}
	if n := utf16Len(*b.Body); n > 65536 {
		writeJSON(q.w, http.StatusUnprocessableEntity, map[string]any{
			"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
			"errors": []any{map[string]any{"resource": "IssueComment", "code": "unprocessable", "field": "data",
				"message": "Body is too long (maximum is 65536 characters)"}},
		})
		return "", false
	}
	return *b.Body, true
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

func (s *Server) createComment(q *request) {
	r, is, ok := s.issue(q, "issue_number")
	if !ok {
		return
	}
	body, ok := readBody(q)
	if !ok {
		return
	}
	s.mu.Lock()
	c := s.addCommentLocked(is, Bot, body, AppID)
	v := commentJSON(r, is, c)
	s.mu.Unlock()
	writeJSON(q.w, http.StatusCreated, v)
}

func (s *Server) reactIssue(q *request) {
	_, is, ok := s.issue(q, "issue_number")
	if !ok {
		return
	}
	s.react(q, &is.Reactions)
}

// reactComment reacts to an issue comment or, with review, a review
// comment, of a repository the token reaches.
func (s *Server) reactComment(review bool) func(*request) {
	return func(q *request) {
		id, _ := strconv.ParseInt(q.r.PathValue("comment_id"), 10, 64)
		s.mu.Lock()
		r, ok := s.repos[strings.ToLower(q.r.PathValue("owner")+"/"+q.r.PathValue("repo"))]
		var target *Comment
		if ok && q.inst.repos[r.id] {
			for _, is := range r.issues {
				cs := is.Comments
				if review {
					cs = is.Review
				}
				for _, c := range cs {
					if c.ID == id {
						target = c
					}
				}
			}
		}
		s.mu.Unlock()
		if target == nil {
			writeError(q.w, http.StatusNotFound, "Not Found")
			return
		}
		s.react(q, &target.Reactions)
	}
}

// reactions GitHub accepts.
var reactions = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// react adds the bot's reaction: 201 when new, 200 with the existing one
// when the bot already reacted so, as GitHub answers.
func (s *Server) react(q *request, on *[]Reaction) {
	var b struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(q.body, &b); err != nil || !slices.Contains(reactions, b.Content) {
		writeError(q.w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range *on {
		if x.User.ID == Bot.ID && x.Content == b.Content {
			writeJSON(q.w, http.StatusOK, reactionJSON(x))
			return
		}
	}
	s.nextID++
	x := Reaction{ID: s.nextID, User: Bot, Content: b.Content}
	*on = append(*on, x)
	writeJSON(q.w, http.StatusCreated, reactionJSON(x))
}

func (s *Server) getPull(q *request) {
	r, is, ok := s.issue(q, "pull_number")
	if !ok {
		return
	}
	s.mu.Lock()
	v := pullJSON(r, is)
	s.mu.Unlock()
	writeJSON(q.w, http.StatusOK, v)
}

func (s *Server) listFiles(q *request) {
	_, is, ok := s.issue(q, "pull_number")
	if !ok {
		return
	}
	s.mu.Lock()
	fs := slices.Clone(is.Files)
	s.mu.Unlock()
	lo, hi := s.page(q, len(fs))
	items := []any{}
	for _, f := range fs[lo:hi] {
		v := map[string]any{"sha": "0000000000000000000000000000000000000000", "filename": f.Path, "status": f.Status,
			"additions": f.Additions, "deletions": f.Deletions, "changes": f.Additions + f.Deletions,
			"blob_url": "", "raw_url": "", "contents_url": ""}
		if f.Patch != "" {
			v["patch"] = f.Patch
		}
		items = append(items, v)
	}
	writeJSON(q.w, http.StatusOK, items)
}

func (s *Server) listReviewComments(q *request) {
	r, is, ok := s.issue(q, "pull_number")
	if !ok {
		return
	}
	s.mu.Lock()
	cs := slices.Clone(is.Review)
	s.mu.Unlock()
	if q.r.URL.Query().Get("direction") == "desc" {
		slices.Reverse(cs)
	}
	lo, hi := s.page(q, len(cs))
	items := []any{}
	s.mu.Lock()
	for _, c := range cs[lo:hi] {
		items = append(items, reviewCommentJSON(r, is, c))
	}
	s.mu.Unlock()
	writeJSON(q.w, http.StatusOK, items)
}

// createReply replies in the thread of a top-level review comment.
func (s *Server) createReply(q *request) {
	r, is, ok := s.issue(q, "pull_number")
	if !ok {
		return
	}
	body, ok := readBody(q)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(q.r.PathValue("comment_id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	var root *Comment
	for _, c := range is.Review {
		if c.ID == id {
			root = c
		}
	}
	// "This must be the ID of a top-level review comment, not a reply to
	// that comment. Replies to replies are not supported." 404 is the
	// operation's one documented failure.
	if root == nil || root.InReplyTo != 0 {
		writeError(q.w, http.StatusNotFound, "Not Found")
		return
	}
	c := s.addReviewLocked(is, Bot, "", body, id)
	writeJSON(q.w, http.StatusCreated, reviewCommentJSON(r, is, c))
}

func (s *Server) searchIssues(q *request) {
	query := q.r.URL.Query().Get("q")
	if len(query) > 256 {
		writeError(q.w, http.StatusUnprocessableEntity, "The search is longer than 256 characters.")
		return
	}
	var repos, owners, words []string
	kind, state := "", ""
	for _, f := range strings.Fields(query) {
		k, v, ok := strings.Cut(f, ":")
		switch {
		case ok && k == "repo":
			repos = append(repos, strings.ToLower(v))
		case ok && (k == "org" || k == "user"):
			owners = append(owners, strings.ToLower(v))
		case ok && k == "is" && (v == "issue" || v == "pr"):
			kind = v
		case ok && (k == "is" || k == "state") && (v == "open" || v == "closed"):
			state = v
		default:
			words = append(words, strings.ToLower(f))
		}
	}
	s.mu.Lock()
	var items []any
	for key, r := range s.repos {
		if !q.inst.repos[r.id] && r.private {
			continue
		}
		if (len(repos) > 0 && !slices.Contains(repos, key)) || (len(owners) > 0 && !slices.Contains(owners, strings.ToLower(r.owner))) {
			continue
		}
		for n := 1; n <= r.next; n++ {
			is := r.issues[n]
			if is == nil || (kind == "pr") != is.PullRequest && kind != "" || (state != "" && is.State != state) {
				continue
			}
			text := strings.ToLower(is.Title + " " + is.Body)
			if !allIn(words, text) {
				continue
			}
			v := issueJSON(r, is)
			v["score"] = 1.0
			items = append(items, v)
		}
	}
	s.mu.Unlock()
	lo, hi := s.page(q, len(items))
	writeJSON(q.w, http.StatusOK, map[string]any{"total_count": len(items), "incomplete_results": false, "items": append([]any{}, items[lo:hi]...)})
}

func allIn(words []string, text string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// apiURL is a resource's API URL, as GitHub writes it in payloads.
func apiURL(format string, args ...any) string {
	return "https://api.github.com" + fmt.Sprintf(format, args...)
}
