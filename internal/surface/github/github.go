// Package github is GitHub's side of the seam: its configuration, the
// GitHub App's client, the door at POST /webhooks/github that maps
// deliveries to surface events, and the sender that answers as issue
// comments and review replies.
package github

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/db"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Config is the GitHub App's settings.
type Config struct {
	// AppID is GITHUB_APP_ID; 0 leaves GitHub off.
	AppID int64
	// PrivateKey is the app's PEM key: GITHUB_PRIVATE_KEY, or the contents
	// of GITHUB_PRIVATE_KEY_FILE.
	PrivateKey []byte
	// WebhookSecret verifies deliveries (GITHUB_WEBHOOK_SECRET).
	WebhookSecret string
	// Slug is the app's slug (GITHUB_APP_SLUG): people mention @Slug.
	Slug string
	// APIURL is GITHUB_API_URL; empty is https://api.github.com.
	APIURL string
}

// Load reads Config from the environment. It fails on a GITHUB_APP_ID
// that is not a number, or a GITHUB_PRIVATE_KEY_FILE it cannot read.
func Load(getenv func(string) string) (Config, error) {
	c := Config{WebhookSecret: getenv("GITHUB_WEBHOOK_SECRET"), Slug: getenv("GITHUB_APP_SLUG"), APIURL: getenv("GITHUB_API_URL"),
		PrivateKey: []byte(getenv("GITHUB_PRIVATE_KEY"))}
	if s := getenv("GITHUB_APP_ID"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return Config{}, fmt.Errorf("GITHUB_APP_ID: %q is not an app id", s)
		}
		c.AppID = id
	}
	if f := getenv("GITHUB_PRIVATE_KEY_FILE"); f != "" && len(c.PrivateKey) == 0 {
		key, err := os.ReadFile(f)
		if err != nil {
			return Config{}, fmt.Errorf("GITHUB_PRIVATE_KEY_FILE: %w", err)
		}
		c.PrivateKey = key
	}
	return c, nil
}

// missing names what the configuration lacks to turn GitHub on.
func (c Config) missing() string {
	switch {
	case c.AppID == 0:
		return "GITHUB_APP_ID"
	case len(c.PrivateKey) == 0:
		return "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_FILE"
	case c.WebhookSecret == "":
		return "GITHUB_WEBHOOK_SECRET"
	case c.Slug == "":
		return "GITHUB_APP_SLUG"
	}
	return ""
}

// Installations is the state of the app's installations a door keeps:
// *db.Store.
type Installations interface {
	UpsertGitHubInstallation(ctx context.Context, in db.GitHubInstallation) error
	SetGitHubInstallationSuspended(ctx context.Context, id int64, suspended bool) error
	GitHubInstallationGone(ctx context.Context, id int64) (bool, error)
}

// Store is what GitHub keeps and reads in weft's database: its
// installations, its threads' attachments, the threads URLs name.
// *db.Store implements it.
type Store interface {
	Installations
	Attachments
	RefStore
}

// App is GitHub, built: the client, its sender and its door. With GitHub
// off only Name and Door answer.
type App struct {
	cfg      Config
	client   *githubapi.Client
	installs Installations
	store    Store
	logger   *slog.Logger
	// contexts and grants keep what turns read of GitHub; the door drops
	// what a delivery changes.
	contexts *ContextCache
	grants   *Grants
}

// New builds GitHub on cfg, off (nil client) when cfg lacks a credential.
// It fails on a key or an API URL the client refuses.
func New(cfg Config, store Store, logger *slog.Logger) (*App, error) {
	a := &App{cfg: cfg, installs: store, store: store, logger: logger.With("component", "github")}
	if cfg.missing() != "" {
		return a, nil
	}
	c, err := githubapi.New(githubapi.Deps{AppID: cfg.AppID, PrivateKey: cfg.PrivateKey, WebhookSecret: []byte(cfg.WebhookSecret),
		Slug: cfg.Slug, APIURL: cfg.APIURL, Logger: a.logger})
	if err != nil {
		return nil, err
	}
	a.client = c
	a.contexts = &ContextCache{}
	a.grants = &Grants{Client: c}
	return a, nil
}

// On reports whether GitHub is configured.
func (a *App) On() bool { return a != nil && a.client != nil }

// Client is the GitHub App's client; nil with GitHub off.
func (a *App) Client() *githubapi.Client { return a.client }

// Name is GitHub.
func (a *App) Name() thread.Platform { return thread.PlatformGitHub }

// Door says whether GitHub's webhooks are served, and for which app.
func (a *App) Door() surface.Door {
	if m := a.cfg.missing(); m != "" {
		return surface.Door{Name: "github", Why: "set " + m + " (see docs/github.md)"}
	}
	return surface.Door{Name: "github", On: true, Why: "app @" + a.cfg.Slug + ", webhooks at /webhooks/github"}
}

// Sender answers on GitHub; nil with GitHub off.
func (a *App) Sender() surface.Sender {
	if !a.On() {
		return nil
	}
	return Sender{Client: a.client}
}

// Routes mounts POST /webhooks/github (counted, read and verified,
// admitted). GitHub's payloads run to 25 MB, beyond the 1 MiB the other
// doors' shared buffer takes: the door reads its own (githubapi.ReadDelivery),
// still before admission, so that a sender trickling its body holds no
// slot.
func (a *App) Routes(r chi.Router, m surface.Mount) {
	if !a.On() {
		return
	}
	r.With(m.Count(thread.PlatformGitHub), readFirst(a.client, m.Logger), m.Admit).Method("POST", "/webhooks/github",
		Door{Client: a.client, Recorder: m.Recorder, Installations: a.installs, Logger: m.Logger, Seen: a.seen})
}

// seen drops what the caches keep of what a verified delivery changes:
// its issue or pull request, or its installation's repositories. The
// app's own comments change nothing a turn did not write.
func (a *App) seen(e githubapi.Event) {
	switch {
	case e.Installation == 0 || e.FromApp:
	case e.Intent == githubapi.IntentRepositories || e.Intent == githubapi.IntentInstalled ||
		e.Intent == githubapi.IntentUninstalled || e.Intent == githubapi.IntentSuspended || e.Intent == githubapi.IntentUnsuspended:
		a.grants.Drop(e.Installation)
	case e.Issue != nil && e.Repo.ID != 0:
		a.contexts.Changed(e.Installation, e.Repo.ID, e.Issue.Number)
	}
}
