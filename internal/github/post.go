package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	gh "github.com/google/go-github/v93/github"
)

// ReactionEyes is the 👀 reaction, weft's fast acknowledgement.
const ReactionEyes = "eyes"

// markerPages is how many pages of the newest comments (100 each) are
// searched for a post's marker: a retry follows its crash by seconds or
// minutes, not by two hundred comments.
const markerPages = 2

// markerRe finds weft's markers in a comment body.
var markerRe = regexp.MustCompile(`<!-- weft:([A-Za-z0-9_.:/#-]+) -->`)

// Marker is the hidden marker of part i (from 0) of outbox row id's
// answer: "<!-- weft:ID -->" on the first part, "<!-- weft:ID#2 -->" on
// the second, so each part is found on its own.
func Marker(id string, i int) string {
	if i == 0 {
		return "<!-- weft:" + id + " -->"
	}
	return "<!-- weft:" + id + "#" + strconv.Itoa(i+1) + " -->"
}

// Markers are the markers found in body, as Marker writes them.
func Markers(body string) []string {
	return markerRe.FindAllString(body, -1)
}

// Post is an answer to post as one or more comments.
type Post struct {
	Repo   Repo
	Number int
	// ReplyTo is a review thread's first comment (Comment.ThreadRoot:
	// GitHub takes no reply to a reply): the answer is a reply in that
	// thread. 0 posts issue (or PR conversation) comments.
	ReplyTo int64
	// OutboxID is the outbox row's id, written into each part's marker.
	OutboxID string
	Text     string
	// Fresh says no earlier attempt of this row can have posted
	// anything, so the lookup of markers is skipped.
	Fresh bool
}

// Bodies are the comments p is posted as: its text split below
// BodyLimit, each part ending in its own marker.
func (p Post) Bodies() []string {
	parts := Split(p.Text, partLimit)
	if len(parts) == 0 {
		parts = []string{""}
	}
	for i := range parts {
		parts[i] += "\n\n" + Marker(p.OutboxID, i)
	}
	return parts
}

// PostComment posts p in installation inst and returns the ids of its
// comments, in order. Unless p is Fresh it first looks for each part's
// marker among the newest comments and posts only the parts it does not
// find: a retry after a crash, or after an answer that never arrived,
// leaves exactly one comment per part.
func (c *Client) PostComment(ctx context.Context, inst int64, p Post) ([]int64, error) {
	in, err := c.inst(inst)
	if err != nil {
		return nil, err
	}
	bodies := p.Bodies()
	found := map[string]int64{}
	if !p.Fresh {
		if found, err = c.findMarkers(ctx, in, p); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(bodies))
	for i, body := range bodies {
		if id, ok := found[Marker(p.OutboxID, i)]; ok {
			ids[i] = id
			continue
		}
		if ids[i], err = c.postOne(ctx, in, p, body); err != nil {
			return ids[:i], err
		}
	}
	return ids, nil
}

func (c *Client) postOne(ctx context.Context, in *installation, p Post, body string) (int64, error) {
	if p.ReplyTo != 0 {
		// go-github's CreateCommentInReplyTo posts to the create-review-
		// comment operation, whose description requires commit_id and
		// path; GitHub's own reply operation takes the body alone.
		u := fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", url.PathEscape(p.Repo.Owner), url.PathEscape(p.Repo.Name), p.Number, p.ReplyTo)
		req, err := in.client.NewRequest(ctx, http.MethodPost, u, gh.IssueCommentRequest{Body: body})
		if err != nil {
			return 0, fmt.Errorf("github: create_reply_for_review_comment: %w", err)
		}
		var cm gh.PullRequestComment
		_, err = in.client.Do(req, &cm)
		return cm.GetID(), translate(ctx, "create_reply_for_review_comment", err)
	}
	cm, _, err := in.client.Issues.CreateComment(ctx, p.Repo.Owner, p.Repo.Name, p.Number, gh.IssueCommentRequest{Body: body})
	return cm.GetID(), translate(ctx, "create_issue_comment", err)
}

// findMarkers maps the markers of p's row found among the newest comments
// (issue comments, or the PR's review comments) to their comments' ids.
func (c *Client) findMarkers(ctx context.Context, in *installation, p Post) (map[string]int64, error) {
	found := map[string]int64{}
	note := func(id int64, body string) {
		for _, m := range Markers(body) {
			found[m] = id
		}
	}
	if p.ReplyTo != 0 {
		opts := &gh.PullRequestListCommentsOptions{Sort: "created", Direction: "desc", ListOptions: gh.ListOptions{PerPage: 100}}
		for page := 1; page <= markerPages; page++ {
			opts.Page = page
			cms, resp, err := in.client.PullRequests.ListComments(ctx, p.Repo.Owner, p.Repo.Name, p.Number, opts)
			if err != nil {
				return nil, translate(ctx, "list_review_comments", err)
			}
			for _, cm := range cms {
				note(cm.GetID(), cm.GetBody())
			}
			if resp.NextPage == 0 {
				break
			}
		}
		return found, nil
	}
	err := c.newestIssueComments(ctx, in, p.Repo, p.Number, markerPages, func(cms []*gh.IssueComment) bool {
		for _, cm := range cms {
			note(cm.GetID(), cm.GetBody())
		}
		return true
	})
	return found, err
}

// newestIssueComments hands visit the pages of an issue's comments from
// the newest backwards, at most pages of them, until visit returns false.
// GitHub lists an issue's comments oldest first, with no direction: the
// first page's Link header names the last.
func (c *Client) newestIssueComments(ctx context.Context, in *installation, repo Repo, number, pages int, visit func([]*gh.IssueComment) bool) error {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	first, resp, err := in.client.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opts)
	if err != nil {
		return translate(ctx, "list_issue_comments", err)
	}
	if resp.LastPage == 0 {
		visit(reversed(first))
		return nil
	}
	for page := resp.LastPage; page >= 1 && pages > 0; page, pages = page-1, pages-1 {
		cms := first
		if page != 1 {
			opts.Page = page
			if cms, _, err = in.client.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opts); err != nil {
				return translate(ctx, "list_issue_comments", err)
			}
		}
		if !visit(reversed(cms)) {
			return nil
		}
	}
	return nil
}

// reversed is cms newest first.
func reversed(cms []*gh.IssueComment) []*gh.IssueComment {
	out := make([]*gh.IssueComment, len(cms))
	for i, cm := range cms {
		out[len(cms)-1-i] = cm
	}
	return out
}

// ReactToComment puts reaction content on comment cm (an issue or review
// comment). GitHub answers 200 for a reaction already there, so a retry
// adds nothing.
func (c *Client) ReactToComment(ctx context.Context, inst int64, repo Repo, cm *Comment, content string) error {
	in, err := c.inst(inst)
	if err != nil {
		return err
	}
	if cm.Review {
		_, _, err = in.client.Reactions.CreatePullRequestCommentReaction(ctx, repo.Owner, repo.Name, cm.ID, content)
		return translate(ctx, "create_review_comment_reaction", err)
	}
	_, _, err = in.client.Reactions.CreateIssueCommentReaction(ctx, repo.Owner, repo.Name, cm.ID, content)
	return translate(ctx, "create_issue_comment_reaction", err)
}

// ReactToIssue puts reaction content on an issue or PR itself (a
// delegation by an issue's body, which has no comment).
func (c *Client) ReactToIssue(ctx context.Context, inst int64, repo Repo, number int, content string) error {
	in, err := c.inst(inst)
	if err != nil {
		return err
	}
	_, _, err = in.client.Reactions.CreateIssueReaction(ctx, repo.Owner, repo.Name, number, content)
	return translate(ctx, "create_issue_reaction", err)
}
