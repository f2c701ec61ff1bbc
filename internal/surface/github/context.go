package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/ttlcache"
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
	// Cache keeps what was read between model calls; nil reads GitHub
	// for every call.
	Cache *ContextCache
}

// PromptSections reads the issue or pull request th is attached to; a
// thread elsewhere gets nothing, and so does one whose read failed (the
// failure is logged: the turn goes on without it).
func (c Context) PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string {
	att, err := c.Store.GitHubAttachment(ctx, th.ID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, contextTimeout)
	defer cancel()
	var x githubapi.Context
	if err == nil {
		x, err = c.cached(ctx, att, chain)
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

// cached is what c.Cache holds for att, if it is still what GitHub has,
// else it is read.
func (c Context) cached(ctx context.Context, att *thread.GitHubAttachment, chain []thread.Stitch) (githubapi.Context, error) {
	if c.Cache == nil {
		return c.read(ctx, att)
	}
	mark := chainMark(chain)
	start := time.Now()
	if x, ok := c.Cache.get(att, mark, start); ok {
		return x, nil
	}
	x, err := c.read(ctx, att)
	if err == nil {
		c.Cache.put(att, mark, x, start)
	}
	return x, err
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
	return &Context{Client: a.client, Store: store, Logger: a.logger, Cache: a.contexts}
}

// contextTTL bounds how long a read issue or pull request is shown
// without a sign of change: a change with no webhook weft records (a
// label, a push to a pull request, an edit seen on another replica) is
// in the prompt within it.
const contextTTL = 2 * time.Minute

// ContextCache keeps each conversation's issue or pull request as read
// for a turn's prompt, so that a turn's model calls, and the turns of a
// conversation continued on another platform, do not read GitHub again
// (about three REST calls each). An entry is dropped when it is
// contextTTL old; when a delivery about its issue or pull request
// reaches this replica (Changed); and when the thread's chain holds a
// GitHub comment, an edit or a deletion it was not read with, which
// covers the deliveries other replicas receive.
type ContextCache struct {
	cache ttlcache.Cache[cachedContext]

	mu      sync.Mutex
	changed map[string]time.Time // issueKey → the latest delivery about it
}

type cachedContext struct {
	x    githubapi.Context
	mark string
	at   time.Time // when its read started
}

// issueKey names an issue or pull request of an installation.
func issueKey(inst, repoID int64, number int) string {
	return fmt.Sprintf("%d/%d/%d", inst, repoID, number)
}

// entryKey names a conversation's entry: the issue's, or a review
// thread's (whose diff it shows).
func entryKey(att *thread.GitHubAttachment) string {
	return fmt.Sprintf("%s/%d", issueKey(att.InstallationID, att.RepoID, att.Number), att.ReviewRoot)
}

func (c *ContextCache) get(att *thread.GitHubAttachment, mark string, now time.Time) (githubapi.Context, bool) {
	e, ok := c.cache.Get(entryKey(att), now)
	if !ok || e.mark != mark {
		return githubapi.Context{}, false
	}
	c.mu.Lock()
	changed := c.changed[issueKey(att.InstallationID, att.RepoID, att.Number)]
	c.mu.Unlock()
	if !e.at.After(changed) {
		return githubapi.Context{}, false
	}
	return e.x, true
}

func (c *ContextCache) put(att *thread.GitHubAttachment, mark string, x githubapi.Context, start time.Time) {
	c.cache.Put(entryKey(att), cachedContext{x: x, mark: mark, at: start}, start, contextTTL)
}

// Changed drops what is kept of an issue or pull request: a delivery
// about it arrived.
func (c *ContextCache) Changed(inst, repoID int64, number int) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = map[string]time.Time{}
	}
	for k, at := range c.changed { // only marks younger than an entry matter
		if now.Sub(at) > contextTTL {
			delete(c.changed, k)
		}
	}
	c.changed[issueKey(inst, repoID, number)] = now
}

// chainMark sums up the GitHub comments a chain holds, edits and
// deletions included: a chain that gained one no longer matches what was
// read with it.
func chainMark(chain []thread.Stitch) string {
	var n int
	var last string
	var edited time.Time
	for _, s := range chain {
		if s.Source != thread.PlatformGitHub {
			continue
		}
		n++
		last = s.ExternalID
		for _, at := range []time.Time{s.EditedAt, s.DeletedAt} {
			if at.After(edited) {
				edited = at
			}
		}
	}
	return fmt.Sprintf("%d/%s/%d", n, last, edited.UnixNano())
}
