package replies

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// Page sizes: the same as every listing's.
const (
	DefaultLimit = threadview.DefaultLimit
	MaxLimit     = threadview.MaxLimit
)

// Order is the order replies come in.
type Order string

// Orders.
const (
	Oldest Order = "oldest"
	Newest Order = "newest"
)

// Source says where a response was read from.
type Source string

// Sources.
const (
	SourceWeft    Source = "weft"    // Postgres: a weft thread, or a Discord thread weft tracks
	SourceDiscord Source = "discord" // Discord's REST history
)

// Request asks for one page of a thread's replies.
type Request struct {
	// ThreadID is a weft thread id (UUID) or a Discord thread id (snowflake).
	ThreadID string
	Limit    int    // 0: DefaultLimit; above MaxLimit: InvalidArgument
	Cursor   string // "" for the first page; else a response's NextCursor
	Order    Order  // "": Oldest
}

// Message is the parent or a reply, in get-thread-replies.md's shape
// (ts, user, text, edited, deleted, subtype, as SlackMessage) and more:
// weft's id for it, its id on its platform, who wrote it by name, and
// when.
type Message struct {
	// TS is when the message was posted, as get-thread-replies.md's ts: a
	// Slack message's own ts, any other message's time in Slack's form
	// ("1700000000.123456").
	TS string `json:"ts"`
	// User is the author's user id on their platform; none for weft's
	// own messages.
	User string `json:"user,omitempty"`
	// Text is the latest text; null when the message was deleted.
	Text *string `json:"text"`
	// Edited and Deleted flag an edited message and a deleted one.
	Edited  bool `json:"edited"`
	Deleted bool `json:"deleted"`
	// Subtype is the stitch type of a stored message ("discord_message" for
	// one read from Discord).
	Subtype string `json:"subtype"`

	// ID is the stitch id of a stored message, or a Discord message id.
	ID string `json:"id"`
	// ExternalID is a stored message's id on its platform, if it has one.
	ExternalID string             `json:"externalId,omitempty"`
	Author     *threadview.Author `json:"author,omitempty"`
	CreatedAt  time.Time          `json:"createdAt"`
	EditedAt   *time.Time         `json:"editedAt,omitempty"`
}

// Response is one page, in get-thread-replies.md's shape (parent,
// replies, nextCursor, hasMore, as SlackResponse) and more: the thread
// asked for and where it was read.
type Response struct {
	Parent  *Message  `json:"parent"`
	Replies []Message `json:"replies"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`

	ThreadID string `json:"threadId"`
	Source   Source `json:"source"`
}

// timestamp is t in Slack's ts form, get-thread-replies.md's ts.
func timestamp(t time.Time) string {
	us := max(t.UnixMicro(), 0)
	return fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
}

// Store reads stored threads. *db.Store implements it.
type Store interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	ThreadParent(ctx context.Context, threadID uuid.UUID) (*thread.Stitch, error)
	ThreadReplies(ctx context.Context, threadID uuid.UUID, p db.ReplyPage) ([]thread.Stitch, error)
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
}

var _ Store = (*db.Store)(nil)

// Config configures a Service.
type Config struct {
	Store   Store
	Discord Discord // nil: only stored threads
	Slack   Slack   // nil: no Slack threads
	// Registry receives the metrics; nil leaves them unexported.
	Registry prometheus.Registerer
	Logger   *slog.Logger
	// RetryBase is the first backoff; zero means one second. Tests shorten it.
	RetryBase time.Duration
}

// Service answers get-thread-replies.
type Service struct {
	store     Store
	discord   Discord
	slack     Slack
	metrics   *metrics
	logger    *slog.Logger
	retryBase time.Duration
}

// New returns a Service, its metrics registered on cfg.Registry.
func New(cfg Config) (*Service, error) {
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base := cfg.RetryBase
	if base <= 0 {
		base = defaultRetryBase
	}
	return &Service{store: cfg.Store, discord: cfg.Discord, slack: cfg.Slack, metrics: m,
		logger: logger.With("component", "replies"), retryBase: base}, nil
}

// Get returns one page of a thread's replies with its parent. Failures are
// *httpapi.Error values.
func (s *Service) Get(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	s.metrics.requests.Inc()
	resp, err := s.get(ctx, req)
	if err != nil {
		return nil, s.failed(ctx, start, req.ThreadID, err)
	}
	s.metrics.successes.WithLabelValues(string(resp.Source)).Inc()
	s.metrics.paged(resp.Source, req.Cursor, resp.HasMore)
	s.metrics.latency.WithLabelValues("success").Observe(time.Since(start).Seconds())
	s.logger.DebugContext(ctx, "get-thread-replies", slog.String("thread_id", req.ThreadID),
		slog.String("source", string(resp.Source)), slog.Int("replies", len(resp.Replies)), slog.Bool("has_more", resp.HasMore))
	return resp, nil
}

// failed counts and logs a failed call and returns its *httpapi.Error.
func (s *Service) failed(ctx context.Context, start time.Time, threadID string, err error) *httpapi.Error {
	e, _ := classify(err)
	s.metrics.failures.WithLabelValues(string(e.Code)).Inc()
	if e.Code == httpapi.CodeRateLimit {
		s.metrics.rateLimits.Inc()
	}
	s.metrics.latency.WithLabelValues("failure").Observe(time.Since(start).Seconds())
	s.logger.WarnContext(ctx, "get-thread-replies failed", slog.String("thread_id", threadID),
		slog.String("code", string(e.Code)), slog.Any("error", e.Err))
	return e
}

// page is a validated request.
type page struct {
	threadID string
	limit    int
	order    Order
	pos      string // "" on the first page
}

func (p page) newest() bool { return p.order == Newest }

// scope is what a page's cursor is bound to: the thread and the order.
func (p page) scope() string { return p.threadID + " " + string(p.order) }

// next is the cursor after a page that ended at pos: a stitch's seq, or a
// Discord message id.
func (p page) next(pos string) *string {
	c := threadview.EncodeCursor(threadview.CursorReplies, p.scope(), pos)
	return &c
}

func (s *Service) get(ctx context.Context, req Request) (*Response, error) {
	p, err := validate(req)
	if err != nil {
		return nil, err
	}
	if id, err := uuid.Parse(req.ThreadID); err == nil {
		return s.retry(ctx, req.ThreadID, func(ctx context.Context) (*Response, error) {
			th, err := s.store.Thread(ctx, id)
			if err != nil {
				return nil, err
			}
			return s.fromStore(ctx, th, p, SourceWeft)
		})
	}
	return s.retry(ctx, req.ThreadID, func(ctx context.Context) (*Response, error) {
		return s.fromDiscord(ctx, p)
	})
}

// validate checks a request and reads its cursor.
func validate(req Request) (page, error) {
	p := page{threadID: req.ThreadID, limit: req.Limit, order: req.Order}
	if _, err := uuid.Parse(req.ThreadID); err != nil && !thread.IsSnowflake(req.ThreadID) {
		return p, invalid("thread id %q is neither a weft thread id nor a Discord thread id", req.ThreadID)
	}
	var err error
	if p.limit, err = threadview.PageLimit(req.Limit); err != nil {
		return p, err
	}
	switch p.order {
	case "":
		p.order = Oldest
	case Oldest, Newest:
	default:
		return p, invalid("order must be oldest or newest")
	}
	if req.Cursor != "" {
		if err := threadview.DecodeCursor(req.Cursor, threadview.CursorReplies, p.scope(), &p.pos); err != nil {
			return p, err
		}
		if p.pos == "" {
			return p, invalid("cursor is not one this API returned")
		}
	}
	return p, nil
}
