package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/thread"
)

// AckAction marks the outbox thought that acknowledges a mention or a
// delegation with 👀: its Parameter names the comment
// (thread.GitHubCommentID), empty for the issue itself.
const AckAction = "react"

// Sender posts a thread's outbox rows on GitHub: answers as issue (or PR
// conversation) comments, or as replies in their review thread, each
// carrying its row's marker so that a retry after a crash finds the
// comment it posted instead of posting it again; acknowledgements as 👀.
// Thoughts and actions, which an agent-session platform shows and GitHub
// has no place for, are not posted.
type Sender struct {
	Client *githubapi.Client
}

// Send delivers o and returns the id of its (first) comment.
func (s Sender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	t, err := thread.ParseGitHubTarget(o.Target)
	if err != nil {
		return "", fmt.Errorf("github: send %s: %w", o.ID, err)
	}
	var body thread.OutboxBody
	if err := json.Unmarshal(o.Body, &body); err != nil {
		return "", fmt.Errorf("github: send %s: %w: body: %w", o.ID, thread.ErrInvalid, err)
	}
	repo := githubapi.Repo{Owner: t.Owner, Name: t.Repo}
	switch o.Kind {
	case thread.OutboxThought:
		if body.Action != AckAction {
			return "", nil
		}
		return "", s.react(ctx, t, repo, body.Parameter)
	case thread.OutboxAction, thread.OutboxSessionUpdate:
		return "", nil
	}
	text := render(o.Kind, body)
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("github: send %s: %w: nothing to post for a %s", o.ID, thread.ErrInvalid, o.Kind)
	}
	ids, err := s.Client.PostComment(ctx, t.InstallationID, githubapi.Post{Repo: repo, Number: t.Number, ReplyTo: t.ReviewRoot,
		OutboxID: o.ID.String(), Text: text,
		// A row's attempts count its claims, this one included: on the
		// first, no earlier attempt can have posted, and the marker
		// lookup is skipped.
		Fresh: o.Attempts == 1})
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", nil
	}
	return strconv.FormatInt(ids[0], 10), nil
}

// react puts 👀 on the comment ref names (thread.GitHubCommentID), or on
// the issue when ref is empty.
func (s Sender) react(ctx context.Context, t thread.GitHubTarget, repo githubapi.Repo, ref string) error {
	if ref == "" {
		return s.Client.ReactToIssue(ctx, t.InstallationID, repo, t.Number, githubapi.ReactionEyes)
	}
	kind, id, _ := strings.Cut(ref, "/")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return fmt.Errorf("github: react: %w: comment %q", thread.ErrInvalid, ref)
	}
	return s.Client.ReactToComment(ctx, t.InstallationID, repo, &githubapi.Comment{ID: n, Review: kind == "review"}, githubapi.ReactionEyes)
}

// render is the comment an outbox row becomes.
func render(k thread.OutboxKind, b thread.OutboxBody) string {
	switch k {
	case thread.OutboxError:
		return "⚠️ " + b.Text
	case thread.OutboxElicitation:
		var sb strings.Builder
		sb.WriteString(b.Text)
		for _, o := range b.Options {
			sb.WriteString("\n- " + o)
		}
		return sb.String()
	}
	return b.Text
}
