package github

import (
	"context"
	"slices"

	gh "github.com/google/go-github/v93/github"
)

// historyPages caps the pages of comments read for a history, whatever
// the budget: a thousand comments is more than a prompt wants.
const historyPages = 10

// GetIssue reads an issue or pull request: title, body, labels, state. A
// pull request's Merged is read from the pull request itself.
func (c *Client) GetIssue(ctx context.Context, inst int64, repo Repo, number int) (*Issue, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, err
	}
	i, _, err := in.client.Issues.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return nil, translate(ctx, "get_issue", err)
	}
	out := issueOf(i)
	out.Repo = repo
	if out.PullRequest {
		pr, _, err := in.client.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
		if err != nil {
			return nil, translate(ctx, "get_pull_request", err)
		}
		out.Merged = pr.GetMerged()
	}
	return out, nil
}

// Comments is an issue's (or PR conversation's) newest comments whose
// bodies fit within budget characters, oldest first, and whether older
// ones were left out. The newest comment is always kept, cut to the
// budget if it alone exceeds it.
func (c *Client) Comments(ctx context.Context, inst int64, repo Repo, number, budget int) ([]Comment, bool, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, false, err
	}
	var (
		newest    []Comment
		truncated bool
		used      int
	)
	err = c.newestIssueComments(ctx, in, repo, number, historyPages, func(cms []*gh.IssueComment) bool {
		for _, cm := range cms {
			x := *issueCommentOf(cm)
			n := len([]rune(x.Body))
			if used+n > budget {
				if len(newest) == 0 {
					x.Body = string([]rune(x.Body)[:max(budget, 0)])
					newest = append(newest, x)
				}
				truncated = true
				return false
			}
			used += n
			newest = append(newest, x)
		}
		return true
	})
	if err != nil {
		return nil, false, err
	}
	for i, j := 0, len(newest)-1; i < j; i, j = i+1, j-1 {
		newest[i], newest[j] = newest[j], newest[i]
	}
	return newest, truncated, nil
}

// File is a file a pull request changes.
type File struct {
	Path string
	// Status is GitHub's: added, removed, modified, renamed, copied,
	// changed, unchanged.
	Status               string
	Additions, Deletions int
	// Patch is the file's unified diff; GitHub omits it for binary and
	// very large diffs.
	Patch string
}

// Files is the files a pull request changes, at most max of them (GitHub
// lists up to 3,000), with their additions and deletions.
func (c *Client) Files(ctx context.Context, inst int64, repo Repo, number, max int) ([]File, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, err
	}
	var out []File
	opts := &gh.ListOptions{PerPage: 100}
	for {
		fs, resp, err := in.client.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, translate(ctx, "list_pull_request_files", err)
		}
		for _, f := range fs {
			if len(out) == max {
				return out, nil
			}
			out = append(out, File{Path: f.GetFilename(), Status: f.GetStatus(),
				Additions: f.GetAdditions(), Deletions: f.GetDeletions(), Patch: f.GetPatch()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// FileDiff is the diff of one file of a pull request, cut to budget
// characters, and whether it was cut. A file the PR does not change, or
// whose diff GitHub does not give, is "" and false.
func (c *Client) FileDiff(ctx context.Context, inst int64, repo Repo, number int, path string, budget int) (string, bool, error) {
	fs, err := c.Files(ctx, inst, repo, number, 3000)
	if err != nil {
		return "", false, err
	}
	for _, f := range fs {
		if f.Path != path {
			continue
		}
		diff, cut := cutLines(f.Patch, budget)
		return diff, cut, nil
	}
	return "", false, nil
}

// Repositories is every repository installation inst may reach.
func (c *Client) Repositories(ctx context.Context, inst int64) ([]Repo, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, err
	}
	var out []Repo
	opts := &gh.ListOptions{PerPage: 100}
	for {
		rs, resp, err := in.client.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, translate(ctx, "list_installation_repositories", err)
		}
		out = append(out, reposOf(rs.Repositories)...)
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ReviewThread is a review-comment thread's newest comments (root is its
// first comment's id) whose bodies fit within budget characters, oldest
// first, and whether older ones were left out. GitHub has no listing of
// one thread: the pull request's review comments are read newest first
// and those of the thread kept, at most historyPages pages.
func (c *Client) ReviewThread(ctx context.Context, inst int64, repo Repo, number int, root int64, budget int) ([]Comment, bool, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, false, err
	}
	var (
		newest []Comment
		used   int
	)
	opts := &gh.PullRequestListCommentsOptions{Sort: "created", Direction: "desc", ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 1; page <= historyPages; page++ {
		opts.Page = page
		cms, resp, err := in.client.PullRequests.ListComments(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, false, translate(ctx, "list_review_comments", err)
		}
		for _, cm := range cms {
			if cm.GetID() != root && cm.GetInReplyTo() != root {
				continue
			}
			x := *reviewCommentOf(cm)
			n := len([]rune(x.Body))
			if used+n > budget {
				if len(newest) == 0 {
					x.Body = string([]rune(x.Body)[:max(budget, 0)])
					newest = append(newest, x)
				}
				slices.Reverse(newest)
				return newest, true, nil
			}
			used += n
			newest = append(newest, x)
		}
		if resp.NextPage == 0 {
			break
		}
	}
	slices.Reverse(newest)
	return newest, false, nil
}
