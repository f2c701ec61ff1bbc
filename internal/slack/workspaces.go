package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/weft-dev/weft/internal/thread"
)

// ErrNotInstalled is a workspace weft has no token for: the app is not
// installed there (or was uninstalled) and it is not SLACK_BOT_TOKEN's.
var ErrNotInstalled = errors.New("slack: weft is not installed in this workspace")

// TokenSource hands out an installed workspace's bot token, refreshed when
// near expiry; an error wrapping ErrNotInstalled means it has none.
// The Slack seam's *Installations is one.
type TokenSource interface {
	Token(ctx context.Context, teamID string) (string, error)
}

// Workspaces are weft's Slack clients, one per workspace: an installed
// workspace's own bot token (OAuth), else SLACK_BOT_TOKEN's for the one
// workspace it belongs to. A client is built once per token and rebuilt
// when the token rotates. Safe for concurrent use.
type Workspaces struct {
	cfg      Config // Token is SLACK_BOT_TOKEN, maybe empty
	installs TokenSource

	mu      sync.Mutex
	fixed   *Client // SLACK_BOT_TOKEN's
	clients map[string]teamClient
}

type teamClient struct {
	token string
	c     *Client
}

// NewWorkspaces returns the clients: cfg.Token (SLACK_BOT_TOKEN) serves its
// own workspace, installs (nil without OAuth) every installed one; at least
// one of them is needed. cfg's other fields configure every client.
func NewWorkspaces(cfg Config, installs TokenSource) (*Workspaces, error) {
	w := &Workspaces{cfg: cfg, installs: installs, clients: map[string]teamClient{}}
	if cfg.Token == "" && installs == nil {
		return nil, fmt.Errorf("slack: no bot token and no installations")
	}
	if cfg.Token != "" {
		c, err := New(cfg)
		if err != nil {
			return nil, err
		}
		w.fixed = c
	}
	return w, nil
}

// Client returns the client of a workspace: its installation's token when
// it has one, else SLACK_BOT_TOKEN's if that is the workspace's. A
// workspace with neither fails with ErrNotInstalled.
func (w *Workspaces) Client(ctx context.Context, teamID string) (*Client, error) {
	if teamID == "" {
		return nil, fmt.Errorf("%w: no workspace given", ErrNotInstalled)
	}
	if w.installs != nil {
		tok, err := w.installs.Token(ctx, teamID)
		switch {
		case err == nil:
			return w.forToken(teamID, tok)
		case !errors.Is(err, ErrNotInstalled):
			return nil, err
		}
	}
	if w.fixed != nil {
		id, err := w.fixed.Identity(ctx)
		if err != nil {
			return nil, fmt.Errorf("slack: SLACK_BOT_TOKEN's workspace: %w", err)
		}
		if id.TeamID == teamID {
			return w.fixed, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotInstalled, teamID)
}

// forToken is the cached client of a team's token, rebuilt when the token
// changed (rotation, re-install).
func (w *Workspaces) forToken(teamID, token string) (*Client, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if tc, ok := w.clients[teamID]; ok && tc.token == token {
		return tc.c, nil
	}
	cfg := w.cfg
	cfg.Token = token
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	w.clients[teamID] = teamClient{token: token, c: c}
	return c, nil
}

// DefaultTeam is SLACK_BOT_TOKEN's workspace (auth.test, asked once);
// ErrNotInstalled without SLACK_BOT_TOKEN.
func (w *Workspaces) DefaultTeam(ctx context.Context) (string, error) {
	if w.fixed == nil {
		return "", fmt.Errorf("%w: SLACK_BOT_TOKEN is not set", ErrNotInstalled)
	}
	id, err := w.fixed.Identity(ctx)
	if err != nil {
		return "", err
	}
	return id.TeamID, nil
}

// Identity is who weft's bot is in a workspace: its bot user differs from
// one workspace to the next.
func (w *Workspaces) Identity(ctx context.Context, teamID string) (Identity, error) {
	c, err := w.Client(ctx, teamID)
	if err != nil {
		return Identity{}, err
	}
	return c.Identity(ctx)
}

// Download writes the file at f.URL (a url_private) into w, fetched with
// the bot token of f.Workspace as a Bearer; slack-go sends the token only
// to Slack's hosts (or the API URL's, for a fake). A sign-in page served
// instead of the file (no access) is an error.
func (w *Workspaces) Download(ctx context.Context, f thread.File, out io.Writer) error {
	c, err := w.Client(ctx, f.Workspace)
	if err != nil {
		return err
	}
	if err := c.api.GetFileContext(ctx, f.URL, out); err != nil {
		return fmt.Errorf("slack: download %s: %w", f.Name, err)
	}
	return nil
}
