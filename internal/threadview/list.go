package threadview

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
)

// Page sizes of the listings.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// PageLimit is a requested page size as served: DefaultLimit for 0, and
// an InvalidArgument below 0 or above MaxLimit, as the API documents.
func PageLimit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, invalid("limit must not be negative")
	case n > MaxLimit:
		return 0, invalid("limit must be at most %d", MaxLimit)
	case n == 0:
		return DefaultLimit, nil
	}
	return n, nil
}

// Lister lists threads. *db.Store implements it.
type Lister interface {
	ListThreads(ctx context.Context, f db.ThreadFilter) ([]thread.Thread, error)
}

// Query is a listing's filters and page. Zero fields do not filter.
type Query struct {
	Status       thread.Status
	Type         thread.Type
	Platform     thread.Platform // discord, linear, slack or github
	UpdatedSince time.Time
	Limit        int // 0: DefaultLimit; above MaxLimit: InvalidArgument
	Cursor       string
}

// Page is one page of a listing, newest updated first.
type Page struct {
	Threads    []Thread `json:"threads"`
	NextCursor string   `json:"next_cursor,omitempty"`
	HasMore    bool     `json:"has_more"`
}

// threadCursor is where a listing's page ended.
type threadCursor struct {
	Updated time.Time `json:"u"`
	ID      uuid.UUID `json:"i"`
}

// List lists threads for the REST API and the MCP server. Bad filters are
// InvalidArgument errors.
func List(ctx context.Context, store Lister, q Query) (*Page, error) {
	switch {
	case q.Status != "" && !q.Status.Valid():
		return nil, invalid("unknown status %q", q.Status)
	case q.Type != "" && !q.Type.Valid():
		return nil, invalid("unknown thread type %q", q.Type)
	case q.Platform != "" && q.Platform != thread.PlatformDiscord && q.Platform != thread.PlatformLinear && q.Platform != thread.PlatformSlack &&
		q.Platform != thread.PlatformGitHub:
		return nil, invalid("platform must be discord, linear, slack or github")
	}
	limit, err := PageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	// A cursor pages one listing: the same filters.
	scope := fmt.Sprintf("%s %s %s %s", q.Status, q.Type, q.Platform, q.UpdatedSince.Format(time.RFC3339Nano))
	f := db.ThreadFilter{Status: q.Status, Type: q.Type, Platform: q.Platform, UpdatedSince: q.UpdatedSince, Limit: limit + 1}
	if q.Cursor != "" {
		var c threadCursor
		if err := DecodeCursor(q.Cursor, CursorThreads, scope, &c); err != nil {
			return nil, err
		}
		if c.Updated.IsZero() {
			return nil, errBadCursor
		}
		f.AfterUpdated, f.AfterID = c.Updated, c.ID
	}
	threads, err := store.ListThreads(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &Page{Threads: make([]Thread, 0, min(len(threads), limit))}
	if len(threads) > limit {
		threads = threads[:limit]
		last := threads[limit-1]
		out.HasMore, out.NextCursor = true, EncodeCursor(CursorThreads, scope, threadCursor{Updated: last.UpdatedAt, ID: last.ID})
	}
	for i := range threads {
		out.Threads = append(out.Threads, Of(&threads[i]))
	}
	return out, nil
}

// invalid is an InvalidArgument whose message is shown to the client.
func invalid(format string, args ...any) error { return httpapi.Invalid(format, args...) }
