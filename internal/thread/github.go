package thread

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// GitHubAttachment ties a thread to a GitHub conversation: an issue, a
// pull request, or one review-comment thread of a pull request (ReviewRoot
// set: that thread's first comment).
type GitHubAttachment struct {
	ThreadID       uuid.UUID
	InstallationID int64
	// AccountID is the installation's account, the thread's tenant.
	AccountID   int64
	RepoID      int64
	Owner, Repo string
	Number      int
	PullRequest bool
	ReviewRoot  int64
	CreatedBy   string
	Active      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Validate checks the ids GitHub always sends.
func (g *GitHubAttachment) Validate() error {
	if g.InstallationID <= 0 || g.AccountID <= 0 || g.RepoID <= 0 || g.Number <= 0 || g.Owner == "" || g.Repo == "" {
		return newError(ErrInvalid, "github attachment needs an installation, its account, a repository and a number")
	}
	if g.ReviewRoot < 0 || (g.ReviewRoot != 0 && !g.PullRequest) {
		return newError(ErrInvalid, "a github review thread belongs to a pull request")
	}
	if g.CreatedBy == "" {
		return newError(ErrInvalid, "github attachment needs its creator")
	}
	return nil
}

// Conversation is the repository, the number and the review thread.
func (g *GitHubAttachment) Conversation() string {
	return GitHubTarget{InstallationID: g.InstallationID, Owner: g.Owner, Repo: g.Repo, Number: g.Number, ReviewRoot: g.ReviewRoot}.String()
}

// AttachedTo is GitHub.
func (*GitHubAttachment) AttachedTo() Platform { return PlatformGitHub }

// Target is where the thread's answers go on GitHub, an outbox row's target.
func (g *GitHubAttachment) Target() string { return g.Conversation() }

// GitHubTarget is an outbox row's target on GitHub: the installation, the
// repository, the issue or PR, and the review thread answers reply in (0
// for issue comments).
type GitHubTarget struct {
	InstallationID int64
	Owner, Repo    string
	Number         int
	ReviewRoot     int64
}

// String is the target as stored: INSTALLATION/OWNER/REPO/NUMBER[/ROOT].
func (t GitHubTarget) String() string {
	s := strconv.FormatInt(t.InstallationID, 10) + "/" + t.Owner + "/" + t.Repo + "/" + strconv.Itoa(t.Number)
	if t.ReviewRoot != 0 {
		s += "/" + strconv.FormatInt(t.ReviewRoot, 10)
	}
	return s
}

// ParseGitHubTarget reads a target String wrote.
func ParseGitHubTarget(s string) (GitHubTarget, error) {
	bad := newError(ErrInvalid, "github target must be installation/owner/repo/number[/review root]: "+s)
	parts := strings.Split(s, "/")
	if len(parts) != 4 && len(parts) != 5 {
		return GitHubTarget{}, bad
	}
	var t GitHubTarget
	var err error
	if t.InstallationID, err = strconv.ParseInt(parts[0], 10, 64); err != nil || t.InstallationID <= 0 {
		return GitHubTarget{}, bad
	}
	t.Owner, t.Repo = parts[1], parts[2]
	if t.Number, err = strconv.Atoi(parts[3]); err != nil || t.Number <= 0 || t.Owner == "" || t.Repo == "" {
		return GitHubTarget{}, bad
	}
	if len(parts) == 5 {
		if t.ReviewRoot, err = strconv.ParseInt(parts[4], 10, 64); err != nil || t.ReviewRoot <= 0 {
			return GitHubTarget{}, bad
		}
	}
	return t, nil
}

// GitHubCommentID is a GitHub comment's external id on its stitch: issue
// comments and review comments are numbered apart, so the kind comes with
// the id.
func GitHubCommentID(review bool, id int64) string {
	if review {
		return "review/" + strconv.FormatInt(id, 10)
	}
	return "issue/" + strconv.FormatInt(id, 10)
}

// InteractiveGitHub makes a conversation attached to a GitHub issue, pull
// request or review thread. A nil attachment makes Build fail with
// ErrNoPlatform.
func (b *Builder) InteractiveGitHub(g *GitHubAttachment) *Builder {
	b.typ = TypeInteractive
	if g != nil {
		cp := *g
		b.github = &cp
	}
	return b
}
