package githubtest

import (
	"strconv"
	"time"
)

// The JSON GitHub answers with, for the fields weft reads and the ones
// every such object carries.

func userJSON(u User) map[string]any {
	return map[string]any{"login": u.Login, "id": u.ID, "node_id": "U_" + strconv.FormatInt(u.ID, 10),
		"type": u.Type, "site_admin": false, "html_url": "https://github.com/" + u.Login}
}

func repoJSON(r *repo) map[string]any {
	owner := User{ID: r.ownerID, Login: r.owner, Type: "Organization"}
	return map[string]any{"id": r.id, "node_id": "R_" + strconv.FormatInt(r.id, 10), "name": r.name,
		"full_name": r.owner + "/" + r.name, "private": r.private, "owner": userJSON(owner),
		"html_url": "https://github.com/" + r.owner + "/" + r.name, "url": apiURL("/repos/%s/%s", r.owner, r.name)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func issueJSON(r *repo, is *Issue) map[string]any {
	labels := []any{}
	for i, l := range is.Labels {
		labels = append(labels, map[string]any{"id": i + 1, "name": l, "color": "ededed", "default": false})
	}
	assignees := []any{}
	for _, a := range is.Assignees {
		assignees = append(assignees, userJSON(a))
	}
	kind := "issues"
	if is.PullRequest {
		kind = "pull"
	}
	v := map[string]any{
		"id": int64(is.Number) + r.id*100000, "node_id": "I_" + strconv.Itoa(is.Number), "number": is.Number,
		"title": is.Title, "body": is.Body, "state": is.State, "locked": false, "user": userJSON(is.Author),
		"labels": labels, "assignees": assignees, "comments": len(is.Comments),
		"created_at": stamp(is.CreatedAt), "updated_at": stamp(is.CreatedAt), "closed_at": nil,
		"author_association": "MEMBER",
		"url":                apiURL("/repos/%s/%s/issues/%d", r.owner, r.name, is.Number),
		"repository_url":     apiURL("/repos/%s/%s", r.owner, r.name),
		"html_url":           "https://github.com/" + r.owner + "/" + r.name + "/" + kind + "/" + strconv.Itoa(is.Number),
	}
	if is.PullRequest {
		v["pull_request"] = map[string]any{"url": apiURL("/repos/%s/%s/pulls/%d", r.owner, r.name, is.Number),
			"html_url": v["html_url"], "diff_url": v["html_url"].(string) + ".diff", "patch_url": v["html_url"].(string) + ".patch"}
	}
	return v
}

func pullJSON(r *repo, is *Issue) map[string]any {
	v := issueJSON(r, is)
	delete(v, "pull_request")
	v["merged"] = is.Merged
	v["head"] = map[string]any{"ref": "feature", "sha": "1111111111111111111111111111111111111111", "label": r.owner + ":feature"}
	v["base"] = map[string]any{"ref": "main", "sha": "2222222222222222222222222222222222222222", "label": r.owner + ":main"}
	v["additions"], v["deletions"], v["changed_files"] = 0, 0, len(is.Files)
	for _, f := range is.Files {
		v["additions"] = v["additions"].(int) + f.Additions
		v["deletions"] = v["deletions"].(int) + f.Deletions
	}
	return v
}

func commentJSON(r *repo, is *Issue, c *Comment) map[string]any {
	v := map[string]any{
		"id": c.ID, "node_id": "IC_" + strconv.FormatInt(c.ID, 10), "body": c.Body, "user": userJSON(c.Author),
		"created_at": stamp(c.CreatedAt), "updated_at": stamp(c.UpdatedAt), "author_association": "MEMBER",
		"url":       apiURL("/repos/%s/%s/issues/comments/%d", r.owner, r.name, c.ID),
		"issue_url": apiURL("/repos/%s/%s/issues/%d", r.owner, r.name, is.Number),
		"html_url":  "https://github.com/" + r.owner + "/" + r.name + "/issues/" + strconv.Itoa(is.Number) + "#issuecomment-" + strconv.FormatInt(c.ID, 10),
	}
	if c.ViaApp != 0 {
		v["performed_via_github_app"] = map[string]any{"id": c.ViaApp, "slug": AppSlug, "name": AppSlug}
	}
	return v
}

func reviewCommentJSON(r *repo, is *Issue, c *Comment) map[string]any {
	v := map[string]any{
		"id": c.ID, "node_id": "PRRC_" + strconv.FormatInt(c.ID, 10), "body": c.Body, "user": userJSON(c.Author),
		"path": c.Path, "diff_hunk": c.DiffHunk, "line": c.Line, "position": c.Line, "pull_request_review_id": c.ID + 1,
		"commit_id": "1111111111111111111111111111111111111111", "original_commit_id": "1111111111111111111111111111111111111111",
		"created_at": stamp(c.CreatedAt), "updated_at": stamp(c.UpdatedAt), "author_association": "MEMBER",
		"url":              apiURL("/repos/%s/%s/pulls/comments/%d", r.owner, r.name, c.ID),
		"pull_request_url": apiURL("/repos/%s/%s/pulls/%d", r.owner, r.name, is.Number),
		"html_url":         "https://github.com/" + r.owner + "/" + r.name + "/pull/" + strconv.Itoa(is.Number) + "#discussion_r" + strconv.FormatInt(c.ID, 10),
	}
	if c.InReplyTo != 0 {
		v["in_reply_to_id"] = c.InReplyTo
	}
	return v
}

func reactionJSON(x Reaction) map[string]any {
	return map[string]any{"id": x.ID, "node_id": "REA_" + strconv.FormatInt(x.ID, 10), "user": userJSON(x.User),
		"content": x.Content, "created_at": stamp(time.Now())}
}
