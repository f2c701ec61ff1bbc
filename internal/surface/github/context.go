package github

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/thread"
)

// What a turn's prompt is shown of its issue or pull request: the newest
// comments within a budget of characters, the changed files, and the diff
// of the file a review thread is on.
var promptBudgets = githubapi.Budgets{Comments: 12000, Files: 50, Diff: 6000}

// contextTimeout bounds reading the context: a turn goes on without it
// rather than wait on GitHub.
const contextTimeout = 5 * time.Second

// Attachments finds a thread's GitHub attachment: *db.Store.
type Attachments interface {
	GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error)
}

// Context puts a GitHub thread's issue or pull request in the prompt, as
// <github_issue> or <github_pull_request> (an agent.ContextProvider).
type Context struct {
	Client *githubapi.Client
	Store  Attachments
	Logger *slog.Logger
}

// PromptSections reads the issue or pull request th is attached to; a
// thread elsewhere gets nothing, and so does one whose read failed (the
// failure is logged: the turn goes on without it).
func (c Context) PromptSections(ctx context.Context, th *thread.Thread, _ []thread.Stitch) []string {
	att, err := c.Store.GitHubAttachment(ctx, th.ID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, contextTimeout)
	defer cancel()
	var x githubapi.Context
	if err == nil {
		x, err = c.read(ctx, att)
	}
	if err != nil {
		c.Logger.WarnContext(ctx, "github context not read", slog.String("thread_id", th.ID.String()), slog.Any("error", err))
		return nil
	}
	if p := x.Prompt(); p != "" {
		return []string{p}
	}
	return nil
}

func (c Context) read(ctx context.Context, att *thread.GitHubAttachment) (githubapi.Context, error) {
	repo := githubapi.Repo{ID: att.RepoID, Owner: att.Owner, Name: att.Repo}
	var path string
	if att.ReviewRoot != 0 {
		// The review thread's file, whose diff the model is shown.
		cs, _, err := c.Client.ReviewThread(ctx, att.InstallationID, repo, att.Number, att.ReviewRoot, 1)
		if err != nil {
			return githubapi.Context{}, err
		}
		if len(cs) > 0 {
			path = cs[0].Path
		}
	}
	return c.Client.ReadContext(ctx, att.InstallationID, repo, att.Number, promptBudgets, path)
}

// PromptContext is GitHub's context provider for turns, reading
// attachments from store; nil with GitHub off.
func (a *App) PromptContext(store Attachments) *Context {
	if !a.On() {
		return nil
	}
	return &Context{Client: a.client, Store: store, Logger: a.logger}
}
