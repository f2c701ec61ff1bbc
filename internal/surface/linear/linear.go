// Package linear is Linear's side of the seam: its configuration, the
// wired client, sender and OAuth installs, its door and its history source.
package linear

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/history"
	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Config is the Linear app's settings.
type Config struct {
	WebhookSecret string
	ClientID      string
	ClientSecret  string
	RedirectURI   string
	AccessToken   string // single-workspace mode, no OAuth
	APIURL        string
	EncryptionKey string
	// RequestsPerHour is each workspace's request budget
	// (WEFT_LINEAR_REQUESTS_PER_HOUR, default linear.DefaultRequestsPerHour).
	RequestsPerHour int
	// ThoughtInterval spaces the progress thoughts of an answer being
	// written (WEFT_LINEAR_THOUGHT_INTERVAL, default DefaultThoughtInterval).
	ThoughtInterval time.Duration
}

// Load reads Config from the environment.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		WebhookSecret: getenv("LINEAR_WEBHOOK_SECRET"),
		ClientID:      getenv("LINEAR_CLIENT_ID"),
		ClientSecret:  getenv("LINEAR_CLIENT_SECRET"),
		RedirectURI:   getenv("LINEAR_REDIRECT_URI"),
		AccessToken:   getenv("LINEAR_ACCESS_TOKEN"),
		APIURL:        getenv("LINEAR_API_URL"),
		EncryptionKey: getenv("WEFT_ENCRYPTION_KEY"),
	}
	if c.APIURL == "" {
		c.APIURL = linearapi.DefaultEndpoint
	}
	if v := getenv("WEFT_LINEAR_REQUESTS_PER_HOUR"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("WEFT_LINEAR_REQUESTS_PER_HOUR: %q is not a positive number", v)
		}
		c.RequestsPerHour = n
	}
	if v := getenv("WEFT_LINEAR_THOUGHT_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("WEFT_LINEAR_THOUGHT_INTERVAL: %q is not a positive duration", v)
		}
		c.ThoughtInterval = d
	}
	return c, nil
}

// tokenURL is the OAuth token endpoint beside the GraphQL endpoint, so that
// pointing LINEAR_API_URL at a fake points both.
func (c Config) tokenURL() string {
	if c.APIURL == linearapi.DefaultEndpoint {
		return linearapi.DefaultTokenURL
	}
	return strings.TrimSuffix(c.APIURL, "/graphql") + "/oauth/token"
}

// App is the wired Linear platform: nil fields are switched off.
type App struct {
	// webhookSecret verifies /webhooks/linear; "" leaves it off.
	webhookSecret string
	client        *linearapi.Client
	sender        *linearapi.Sender
	history       history.Fetcher
	oauth         *OAuth
	// thoughts post the progress of answers being written.
	thoughts *Thoughts
	// uploads are the hosts whose images in prompts are read.
	uploads linearapi.Uploads
	// store finds the threads people name and their sessions.
	store  *db.Store
	logger *slog.Logger
}

// New builds the Linear client from the configuration: a static
// token for one workspace, or OAuth installations. Without either, Linear is
// off (logDoors says so).
func New(c Config, store *db.Store, logger *slog.Logger) (*App, error) {
	app := &App{webhookSecret: c.WebhookSecret, uploads: linearapi.NewUploads(c.APIURL), store: store, logger: logger}
	var tokens linearapi.TokenSource
	switch {
	case c.AccessToken != "":
		tokens = linearapi.StaticToken(c.AccessToken)
	case c.ClientID != "":
		key, err := secret.ParseKey(c.EncryptionKey)
		if err != nil {
			return nil, fmt.Errorf("WEFT_ENCRYPTION_KEY: %w", err)
		}
		cipher, err := secret.NewCipher(key)
		if err != nil {
			return nil, err
		}
		oauth := linearapi.NewOAuthClient(c.ClientID, c.ClientSecret, c.RedirectURI, c.tokenURL(), nil)
		inst := NewInstallations(store, cipher, oauth, logger) // names its component itself
		tokens = inst
		app.oauth = &OAuth{ClientID: c.ClientID, RedirectURI: c.RedirectURI,
			StateSecret: []byte(c.ClientSecret), Codes: oauth, Endpoint: c.APIURL, Installations: inst}
	default:
		return app, nil
	}
	budget := linearapi.NewBudget(c.RequestsPerHour)
	client := linearapi.NewClient(linearapi.ClientDeps{Endpoint: c.APIURL, Tokens: tokens, Budget: budget})
	var workspaces linearapi.Workspaces = store
	if c.AccessToken != "" {
		workspaces = nil // one token for every workspace: a send needs no lookup
	}
	app.client = client
	app.sender = linearapi.NewSender(client, workspaces)
	app.history = linearHistory{client}
	// A progress thought is tried once: the next one, or the response,
	// carries its text anyway.
	once := linearapi.NewClient(linearapi.ClientDeps{Endpoint: c.APIURL, Tokens: tokens, Budget: budget,
		Retry: linearapi.Retry{MaxAttempts: 1}})
	app.thoughts = NewThoughts(ThoughtsDeps{Client: once, Attachments: store, Interval: c.ThoughtInterval,
		OneToken: c.AccessToken != "", Logger: logger.With("component", "linear_progress")})
	return app, nil
}

// Name is Linear.
func (a *App) Name() thread.Platform { return thread.PlatformLinear }

// Door says how Linear is reached: a static token or OAuth installs, and
// whether its webhooks are served.
func (a *App) Door() surface.Door {
	if a.sender == nil {
		return surface.Door{Name: "linear", Why: "set LINEAR_ACCESS_TOKEN, or LINEAR_CLIENT_ID with LINEAR_CLIENT_SECRET and WEFT_ENCRYPTION_KEY"}
	}
	how := []string{"LINEAR_ACCESS_TOKEN (one workspace)"}
	if a.oauth != nil {
		how = []string{"OAuth installs at /oauth/linear/install"}
	}
	if a.webhookSecret == "" {
		how = append(how, "webhooks off: LINEAR_WEBHOOK_SECRET is not set")
	} else {
		how = append(how, "webhooks at /webhooks/linear")
	}
	return surface.Door{Name: "linear", On: true, Why: strings.Join(how, "; ")}
}

// Sender delivers to Linear; nil with Linear off.
func (a *App) Sender() surface.Sender {
	if a.sender == nil {
		return nil
	}
	return settling{a.sender, a.thoughts}
}

// Thoughts posts the progress of the answers being written in Linear
// sessions, for the agent's partial answers; nil with Linear off.
func (a *App) Thoughts() *Thoughts { return a.thoughts }

// settling sends a session's closing activity only once its progress
// thoughts are settled (Thoughts.Settle).
type settling struct {
	*linearapi.Sender
	thoughts *Thoughts
}

func (s settling) Send(ctx context.Context, o thread.Outbox) (string, error) {
	switch o.Kind {
	case thread.OutboxResponse, thread.OutboxElicitation, thread.OutboxError:
		s.thoughts.Settle(o.Target)
	}
	return s.Sender.Send(ctx, o)
}

// AddWorkers registers the worker that moves a delegated issue to its
// team's first started state; none with Linear off.
func (a *App) AddWorkers(w *river.Workers) {
	if a.sender == nil {
		return
	}
	river.AddWorker(w, NewStartIssueWorker(a.sender, a.logger))
}

// issueURLTimeout bounds reading an issue's URL for a continuation's link
// back, which a continue command waits for within its platform's deadline.
const issueURLTimeout = time.Second

// On reports whether Linear is configured.
func (a *App) On() bool { return a.sender != nil }

// Client is the Linear client (nil when Linear is off): it downloads the
// uploads of issues and comments with each workspace's token.
func (a *App) Client() *linearapi.Client { return a.client }

// Routes mounts Linear's doors: the webhooks with LINEAR_WEBHOOK_SECRET,
// the install flow with OAuth.
func (a *App) Routes(r chi.Router, m surface.Mount) {
	Doors{WebhookSecret: []byte(a.webhookSecret), OAuth: a.oauth, Uploads: a.uploads}.Routes(r, m)
}

// HistorySection puts an issue's comments in the prompt; nil with Linear
// off.
func (a *App) HistorySection(store *db.Store) history.Section {
	if a.history == nil {
		return nil
	}
	return HistorySection(a.history, store)
}

// IssueURL reads a Linear issue's URL, for the link back from a
// conversation continued elsewhere; nil with Linear off.
func (a *App) IssueURL() func(context.Context, *thread.LinearAttachment) (string, error) {
	if a.client == nil {
		return nil
	}
	return func(ctx context.Context, att *thread.LinearAttachment) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, issueURLTimeout)
		defer cancel()
		issue, err := a.client.Issue(linearapi.WithOrganization(ctx, att.WorkspaceID), att.IssueID)
		if err != nil {
			return "", err
		}
		return issue.URL, nil
	}
}

// linearHistory reads a Linear issue's comment thread for the prompt.
type linearHistory struct{ c *linearapi.Client }

func (h linearHistory) ThreadHistory(ctx context.Context, ref history.Ref) ([]history.Message, error) {
	issue, err := h.c.Issue(linearapi.WithOrganization(ctx, ref.Workspace), ref.ID)
	if err != nil {
		return nil, err
	}
	out := make([]history.Message, 0, len(issue.Comments))
	for _, c := range issue.Comments {
		out = append(out, history.Message{ID: c.ID, Author: c.AuthorName, Text: c.Body, Edited: !c.EditedAt.IsZero()})
	}
	return out, nil
}

// Hint is what people type to name one of Linear's conversations.
func (a *App) Hint() string { return Refs{}.Hint() }

// Resolve finds the Linear session's thread ref names (an issue key, an
// issue or session id, a Linear URL holding one), for continuing it
// elsewhere.
func (a *App) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	return Refs{Store: a.store}.Resolve(ctx, ref, organisation)
}

// Origin links a thread continued elsewhere back to its Linear issue.
func (a *App) Origin(ctx context.Context, threadID uuid.UUID) (label, url string, err error) {
	return Origin{Store: a.store, IssueURL: a.IssueURL()}.Origin(ctx, threadID)
}
