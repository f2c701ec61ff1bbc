package githubtest

import (
	"strings"
	"time"
)

type repo struct {
	id          int64
	owner, name string
	private     bool
	issues      map[int]*Issue
	next        int
	// ownerID is the owner's account id: the installed account's, as on
	// GitHub, when the account was installed first.
	ownerID int64
}

// Issue is an issue or pull request in the fake.
type Issue struct {
	Repo        string // "owner/name"
	Number      int
	Title, Body string
	State       string
	PullRequest bool
	Merged      bool
	Labels      []string
	Author      User
	Assignees   []User
	CreatedAt   time.Time
	Comments    []*Comment
	// Review is the pull request's review comments.
	Review []*Comment
	// Files is what the pull request changes.
	Files     []File
	Reactions []Reaction
}

// Comment is an issue comment or a review comment.
type Comment struct {
	ID        int64
	Body      string
	Author    User
	CreatedAt time.Time
	UpdatedAt time.Time
	// ViaApp is the app that posted it (performed_via_github_app), 0 if none.
	ViaApp int64
	// InReplyTo, Path and DiffHunk are a review comment's.
	InReplyTo int64
	Path      string
	DiffHunk  string
	Line      int
	Reactions []Reaction
}

// File is a file a pull request changes.
type File struct {
	Path                 string
	Status               string
	Additions, Deletions int
	Patch                string
}

// Reaction is a reaction someone put on an issue or comment.
type Reaction struct {
	ID      int64
	User    User
	Content string
}

// repoLocked is the repository full ("owner/name"), made if new.
func (s *Server) repoLocked(full string) *repo {
	key := strings.ToLower(full)
	if r, ok := s.repos[key]; ok {
		return r
	}
	owner, name, _ := strings.Cut(full, "/")
	s.nextID++
	r := &repo{id: s.nextID, owner: owner, name: name, issues: map[int]*Issue{}, ownerID: s.nextID * 10}
	if u, ok := s.users[strings.ToLower(owner)]; ok {
		r.ownerID = u.ID
	}
	s.repos[key] = r
	return r
}

// AddIssue opens an issue (or, with pr, a pull request) in repository
// full and returns its number.
func (s *Server) AddIssue(full string, author User, title, body string, pr bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(full)
	r.next++
	r.issues[r.next] = &Issue{Repo: r.owner + "/" + r.name, Number: r.next, Title: title, Body: body,
		State: "open", PullRequest: pr, Author: author, CreatedAt: s.clock().UTC().Truncate(time.Second)}
	return r.next
}

// Update changes an issue under the fake's lock: labels, files, state.
func (s *Server) Update(full string, number int, f func(*Issue)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.repoLocked(full).issues[number])
}

// AddComment adds a comment by author to an issue or PR's conversation
// and returns it (a copy).
func (s *Server) AddComment(full string, number int, author User, body string) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addCommentLocked(s.repoLocked(full).issues[number], author, body, 0)
}

func (s *Server) addCommentLocked(is *Issue, author User, body string, viaApp int64) *Comment {
	s.nextID++
	now := s.clock().UTC().Truncate(time.Second)
	c := &Comment{ID: s.nextID, Body: body, Author: author, CreatedAt: now, UpdatedAt: now, ViaApp: viaApp}
	is.Comments = append(is.Comments, c)
	return c
}

// AddReviewComment adds a review comment on path of a pull request, a
// reply in the thread of inReplyTo when it is not 0, and returns it.
func (s *Server) AddReviewComment(full string, number int, author User, path, body string, inReplyTo int64) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addReviewLocked(s.repoLocked(full).issues[number], author, path, body, inReplyTo)
}

func (s *Server) addReviewLocked(is *Issue, author User, path, body string, inReplyTo int64) *Comment {
	s.nextID++
	now := s.clock().UTC().Truncate(time.Second)
	c := &Comment{ID: s.nextID, Body: body, Author: author, CreatedAt: now, UpdatedAt: now,
		InReplyTo: inReplyTo, Path: path, DiffHunk: "@@ -1,3 +1,4 @@", Line: 1}
	if inReplyTo != 0 {
		// GitHub files a reply on its thread's file and line.
		for _, p := range is.Review {
			if p.ID == inReplyTo {
				c.Path, c.DiffHunk, c.Line = p.Path, p.DiffHunk, p.Line
			}
		}
	}
	is.Review = append(is.Review, c)
	return c
}

// Issue is a copy of an issue or pull request, with its comments.
func (s *Server) Issue(full string, number int) Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := *s.repoLocked(full).issues[number]
	is.Comments = copyComments(is.Comments)
	is.Review = copyComments(is.Review)
	return is
}

// BotComments is every comment the app's bot posted on an issue, its
// conversation's and its review comments, in order.
func (s *Server) BotComments(full string, number int) []Comment {
	is := s.Issue(full, number)
	var out []Comment
	for _, c := range append(is.Comments, is.Review...) {
		if c.Author.Login == BotLogin {
			out = append(out, *c)
		}
	}
	return out
}

func copyComments(cs []*Comment) []*Comment {
	out := make([]*Comment, len(cs))
	for i, c := range cs {
		cp := *c
		out[i] = &cp
	}
	return out
}
