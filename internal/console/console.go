// Package console is the operator console at /console: server-rendered
// pages (html/template, assets embedded in the binary, one small script and
// no build step) listing threads, showing each thread's timeline live, and
// the ops views.
//
// It is off unless an API token is configured. An operator logs in with
// that token and gets a session cookie (HttpOnly, SameSite=Strict, Secure
// under TLS); every POST carries a CSRF token; every page is served with a
// strict Content-Security-Policy that allows no inline script, and every
// text from users and models goes through html/template's escaping.
//
// A timeline follows new stitches by server-sent events fed by Postgres
// LISTEN/NOTIFY (see db.WatchStitches): nothing polls.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/thread"
)

// Prefix is the path the console is served under.
const Prefix = "/console"

// Store is what the console reads. *db.Store implements it.
type Store interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	ConsoleThreads(ctx context.Context, f db.ConsoleFilter) ([]db.ConsoleThread, error)
	ConsoleStitches(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]db.ConsoleStitch, error)
	LLMBodies(ctx context.Context, threadID, stitchID uuid.UUID) (req, resp json.RawMessage, err error)
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
	GitHubAttachment(ctx context.Context, threadID uuid.UUID) (*thread.GitHubAttachment, error)
	ThreadOutbox(ctx context.Context, threadID uuid.UUID) ([]thread.Outbox, error)
	OutboxBacklog(ctx context.Context, limit int) ([]thread.Outbox, error)
	RecentDeliveries(ctx context.Context, limit int) ([]db.Delivery, error)
	LLMUsageSince(ctx context.Context, since time.Time) ([]db.LLMUsage, error)
	View(ctx context.Context, name string) (*db.ViewRows, error)
	Follow(ctx context.Context, conn *pgx.Conn, threadID uuid.UUID) (*db.Follower, error)
	Partial(ctx context.Context, threadID uuid.UUID) (*db.Partial, error)
	Organisations(ctx context.Context) ([]db.Organisation, error)
}

var _ Store = (*db.Store)(nil)

// Aborter stops a thread the way the API's abort does.
// *ingest.Ingester implements it.
type Aborter interface {
	Abort(ctx context.Context, threadID uuid.UUID, text string) (bool, error)
}

// Approvals lists and decides a thread's requests for approval.
// *approval.Decider implements it.
type Approvals interface {
	List(ctx context.Context, threadID uuid.UUID) ([]thread.Approval, error)
	Decide(ctx context.Context, r approval.Request) (*thread.Approval, error)
}

// Deps is what the console needs.
type Deps struct {
	Logger *slog.Logger
	// Token is WEFT_API_TOKEN, what an operator logs in with; empty turns
	// the console off.
	Token   string
	Store   Store
	Aborter Aborter
	// Approvals, when set, shows a thread's requests for approval with
	// Approve / Deny.
	Approvals Approvals
	// Listen opens a connection of its own for a live timeline's LISTEN
	// (not one of a pool's: it is held while the page stays open).
	Listen func(ctx context.Context) (*pgx.Conn, error)
	// Grace is how long a thread may sit before the list calls it stuck
	// (default 2 minutes, as the stuck_threads view).
	Grace time.Duration
	// MaxLive bounds the live timelines open at once, each holding a
	// connection (default 32); past it a page works but does not follow.
	MaxLive int
	// Agent is the global agent, what an organisation gets where it set
	// nothing of its own.
	Agent Agent
}

// Agent is the global agent's settings as the organisations page shows
// them.
type Agent struct {
	// Model and FastModel are provider/model, or empty for none.
	Model, FastModel string
	Persona          string
	// Servers are the MCP servers (WEFT_MCP_CONFIG) whose tools an
	// organisation's conversations are offered; nil offers none.
	Servers func(organisation string) []string
}

// Console is the console's HTTP handler.
type Console struct {
	d      Deps
	pages  *pages
	auth   *auth
	router chi.Router
	live   chan struct{} // a slot per open live timeline
}

// New returns the console, to be served at Prefix and below.
func New(d Deps) *Console {
	if d.Grace <= 0 {
		d.Grace = 2 * time.Minute
	}
	if d.MaxLive <= 0 {
		d.MaxLive = 32
	}
	c := &Console{d: d, pages: parsePages(), auth: newAuth(d.Token), live: make(chan struct{}, d.MaxLive)}
	c.router = c.routes()
	return c
}

// Mount serves the console on r at Prefix.
func (c *Console) Mount(r chi.Router) {
	r.Handle(Prefix, c)
	r.Handle(Prefix+"/*", c)
}

func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The login link carries the token: never hand it on.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if c.d.Token == "" {
		http.Error(w, "the console is off: set WEFT_API_TOKEN to turn it on", http.StatusServiceUnavailable)
		return
	}
	c.router.ServeHTTP(w, r)
}

func (c *Console) routes() chi.Router {
	r := chi.NewRouter()
	r.Route(Prefix, func(r chi.Router) {
		r.Handle("/static/*", http.StripPrefix(Prefix, staticHandler()))
		r.Get("/login", c.loginPage)
		r.Post("/login", c.login)
		r.Group(func(r chi.Router) {
			r.Use(c.auth.require)
			r.Post("/logout", c.logout)
			r.Get("/", c.threadList)
			r.Get("/threads/{id}", c.threadPage)
			r.Get("/threads/{id}/events", c.events)
			r.Get("/threads/{id}/stitches/{sid}/llm", c.llmBodies)
			r.Post("/threads/{id}/abort", c.abort)
			r.Post("/threads/{id}/approvals/{aid}", c.decide)
			r.Get("/ops", c.ops)
			r.Get("/organisations", c.organisations)
		})
	})
	r.Get(Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	return r
}

// fail answers an error as a page: 404 for what does not exist, 500 (and
// a log line) for the rest.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, thread.ErrNotFound) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Context().Err() != nil {
		return // the operator went away
	}
	c.d.Logger.ErrorContext(r.Context(), "console", slog.String("path", r.URL.Path), slog.Any("error", err))
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// threadID reads the {id} of a route.
func threadID(r *http.Request, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, name))
	return id, err == nil
}

func isNotFound(err error) bool { return errors.Is(err, thread.ErrNotFound) }

// Connector opens live timelines' connections with pool's settings, each
// its own (outside the pool).
func Connector(pool *pgxpool.Pool) func(ctx context.Context) (*pgx.Conn, error) {
	return func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	}
}
