package github

import (
	"context"
	"html"
	"strconv"
	"strings"
)

// Budgets bound what Context reads, in characters (files in count).
type Budgets struct {
	// Comments is the characters of comment history, newest kept.
	Comments int
	// Files is how many changed files of a pull request are listed.
	Files int
	// Diff is the characters of the one file's diff.
	Diff int
}

// Context is what the model is shown of an issue or pull request.
type Context struct {
	Repo  Repo
	Issue *Issue
	// Comments are the newest comments within the budget, oldest first;
	// Older says some were left out.
	Comments []Comment
	Older    bool
	// Files are a pull request's changed files (no patches).
	Files []File
	// DiffPath, Diff and DiffCut are the one file's diff, when asked for.
	DiffPath string
	Diff     string
	DiffCut  bool
}

// ReadContext reads an issue or pull request for the model: the issue,
// its newest comments, and for a pull request its changed files and,
// when diffPath is set (the file a review comment is on), that file's
// diff.
func (c *Client) ReadContext(ctx context.Context, inst int64, repo Repo, number int, b Budgets, diffPath string) (Context, error) {
	is, err := c.GetIssue(ctx, inst, repo, number)
	if err != nil {
		return Context{}, err
	}
	out := Context{Repo: repo, Issue: is}
	if out.Comments, out.Older, err = c.Comments(ctx, inst, repo, number, b.Comments); err != nil {
		return Context{}, err
	}
	if !is.PullRequest {
		return out, nil
	}
	files, err := c.Files(ctx, inst, repo, number, max(b.Files, 1))
	if err != nil {
		return Context{}, err
	}
	for _, f := range files {
		if f.Path == diffPath {
			out.DiffPath = f.Path
			out.Diff, out.DiffCut = cutLines(f.Patch, b.Diff)
		}
		f.Patch = ""
		out.Files = append(out.Files, f)
	}
	if len(out.Files) > b.Files { // one was read for a zero budget
		out.Files = out.Files[:max(b.Files, 0)]
	}
	if diffPath != "" && out.DiffPath == "" {
		// Beyond the listed files: read it on its own.
		if out.Diff, out.DiffCut, err = c.FileDiff(ctx, inst, repo, number, diffPath, b.Diff); err != nil {
			return Context{}, err
		}
		out.DiffPath = diffPath
	}
	return out, nil
}

// Prompt renders the context in the tagged shape the other platforms'
// prompts use: <github_issue> or <github_pull_request>. Bodies stay
// Markdown as written; weft's own markers are left out.
func (x Context) Prompt() string {
	if x.Issue == nil {
		return ""
	}
	tag := "github_issue"
	if x.Issue.PullRequest {
		tag = "github_pull_request"
	}
	var b strings.Builder
	is := x.Issue
	b.WriteString("<" + tag + ` repository="` + attr(x.Repo.FullName()) + `" number="` + strconv.Itoa(is.Number) +
		`" state="` + attr(state(is)) + `" url="` + attr(is.URL) + `" author="` + attr(is.Author.Login) + "\">\n")
	b.WriteString("<title>" + is.Title + "</title>\n")
	if len(is.Labels) > 0 {
		b.WriteString(`<labels>` + attr(strings.Join(is.Labels, ", ")) + "</labels>\n")
	}
	if strings.TrimSpace(is.Body) != "" {
		b.WriteString("<body>" + unmarked(is.Body) + "</body>\n")
	}
	if len(x.Files) > 0 {
		b.WriteString("<changed_files>\n")
		for _, f := range x.Files {
			b.WriteString(`<file path="` + attr(f.Path) + `" status="` + attr(f.Status) + `" additions="` +
				strconv.Itoa(f.Additions) + `" deletions="` + strconv.Itoa(f.Deletions) + "\"/>\n")
		}
		b.WriteString("</changed_files>\n")
	}
	if x.DiffPath != "" && x.Diff != "" {
		b.WriteString(`<diff path="` + attr(x.DiffPath) + `"`)
		if x.DiffCut {
			b.WriteString(` truncated="true"`)
		}
		b.WriteString(">\n" + x.Diff + "</diff>\n")
	}
	if len(x.Comments) > 0 {
		b.WriteString("<comments")
		if x.Older {
			b.WriteString(` older_omitted="true"`)
		}
		b.WriteString(">\n")
		for _, cm := range x.Comments {
			b.WriteString(`<comment author="` + attr(cm.Author.Login) + `" at="` + cm.CreatedAt.UTC().Format("2006-01-02T15:04:05Z") + `">` +
				unmarked(cm.Body) + "</comment>\n")
		}
		b.WriteString("</comments>\n")
	}
	b.WriteString("</" + tag + ">")
	return b.String()
}

func state(is *Issue) string {
	if is.Merged {
		return "merged"
	}
	return is.State
}

// unmarked is body without weft's markers.
func unmarked(body string) string {
	return strings.TrimSpace(markerRe.ReplaceAllString(body, ""))
}

// cutLines cuts s to at most n characters at a line's end.
func cutLines(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	cut := string(r[:max(n, 0)])
	if i := strings.LastIndex(cut, "\n"); i > 0 {
		cut = cut[:i+1]
	}
	return cut, true
}

func attr(s string) string { return html.EscapeString(s) }
