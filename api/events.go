package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// LiveStore is what a thread's event stream needs beyond Store: the watch
// that makes the thread's writes NOTIFY, and the answer streaming on it.
// *db.Store implements it.
type LiveStore interface {
	Follow(ctx context.Context, conn *pgx.Conn, threadID uuid.UUID) (*db.Follower, error)
	Partial(ctx context.Context, threadID uuid.UUID) (*db.Partial, error)
}

var _ LiveStore = (*db.Store)(nil)

// Event stream limits.
const (
	// eventsKeepAlive is how often an idle stream sends a comment, so
	// proxies do not take it for dead.
	eventsKeepAlive = 25 * time.Second
	// defaultMaxLive bounds the event streams open at once, each holding
	// a database connection.
	defaultMaxLive = 32
	// eventsPage is how many stitches one read of a catch-up takes.
	eventsPage = 200
)

// partialData is a "partial" event's data; a "partial_end" carries
// after_seq alone.
type partialData struct {
	AfterSeq int64  `json:"after_seq"`
	Text     string `json:"text,omitempty"`
}

// statusData is a "status" event's data.
type statusData struct {
	Status thread.Status `json:"status"`
}

// handleThreadEvents streams a thread's new stitches and the answer the
// model is writing, as server-sent events: "stitch" (id: the stitch's
// seq, so a client that reconnects with Last-Event-ID resumes after the
// last it got), "partial" and "partial_end", and "status" when the
// thread's status changes. It wakes on the thread's NOTIFYs, like the
// console's live timeline, never on a timer.
func handleThreadEvents(d Deps) http.Handler {
	maxLive := d.MaxLive
	if maxLive <= 0 {
		maxLive = defaultMaxLive
	}
	slots := make(chan struct{}, maxLive)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, d.Logger, err)
			return
		}
		after, err := lastEventID(r)
		if err != nil {
			httpapi.WriteError(w, r, d.Logger, err)
			return
		}
		ctx := r.Context()
		if _, err := d.Store.Thread(ctx, id); err != nil {
			httpapi.WriteError(w, r, d.Logger, err)
			return
		}
		if d.Listen == nil || d.Live == nil {
			httpapi.WriteError(w, r, d.Logger, &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "event streams are off on this replica"})
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			httpapi.WriteError(w, r, d.Logger, &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "too many event streams open; try again later"})
			return
		}
		conn, err := d.Listen(ctx)
		if err != nil {
			httpapi.WriteError(w, r, d.Logger, fmt.Errorf("events: connect: %w", err))
			return
		}
		f, err := d.Live.Follow(ctx, conn, id)
		if err != nil {
			httpapi.WriteError(w, r, d.Logger, fmt.Errorf("events: %w", err))
			return
		}
		defer func() {
			if err := f.Close(ctx); err != nil {
				d.Logger.WarnContext(ctx, "events: unfollow", slog.Any("error", err))
			}
		}()

		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		// Followed first, then caught up: what was written before the
		// follow is read here, what is written after it wakes Next.
		s := &eventStream{d: d, w: w, rc: http.NewResponseController(w), id: id, after: after}
		if err := s.send(ctx); err != nil {
			s.stop(ctx, err)
			return
		}
		for {
			news, err := f.Next(ctx, eventsKeepAlive)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				s.stop(ctx, err)
				return
			case !news:
				if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || s.rc.Flush() != nil {
					return
				}
				continue
			}
			if err := s.send(ctx); err != nil {
				s.stop(ctx, err)
				return
			}
		}
	})
}

// lastEventID is the seq to resume after: Last-Event-ID, as a browser's
// EventSource sends it on reconnecting, else the after parameter, else 0.
func lastEventID(r *http.Request) (int64, error) {
	v, name := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, httpapi.Invalid("%s must be a stitch seq (a non-negative integer)", name)
	}
	return n, nil
}

// eventStream is one open stream.
type eventStream struct {
	d      Deps
	w      io.Writer
	rc     *http.ResponseController
	id     uuid.UUID
	after  int64 // the newest stitch sent
	status thread.Status
	view   partial.View
}

// send writes the stitches after the last sent, the partial answer if it
// changed, and the status if it changed.
func (s *eventStream) send(ctx context.Context) error {
	for {
		batch, err := s.d.Store.Stitches(ctx, s.id, db.StitchPage{After: s.after, Limit: eventsPage})
		if err != nil {
			return err
		}
		for i := range batch {
			st := &batch[i]
			if err := writeSSE(s.w, "stitch", strconv.FormatInt(st.Seq, 10), threadview.OfStitch(st)); err != nil {
				return err
			}
			s.after = st.Seq
			s.view.Sent(st)
		}
		if len(batch) < eventsPage {
			break
		}
	}
	p, err := s.d.Live.Partial(ctx, s.id)
	if err != nil {
		return err
	}
	if ev, ok := s.view.Next(p); ok {
		name := "partial"
		if ev.End {
			name = "partial_end"
		}
		if err := writeSSE(s.w, name, "", partialData{AfterSeq: ev.AfterSeq, Text: ev.Text}); err != nil {
			return err
		}
	}
	th, err := s.d.Store.Thread(ctx, s.id)
	if err != nil {
		return err
	}
	if th.Status != s.status {
		s.status = th.Status
		if err := writeSSE(s.w, "status", "", statusData{Status: th.Status}); err != nil {
			return err
		}
	}
	return s.rc.Flush()
}

// stop ends a stream on an error: logged unless the client left.
func (s *eventStream) stop(ctx context.Context, err error) {
	if ctx.Err() == nil {
		s.d.Logger.WarnContext(ctx, "events: stream ended", slog.String("thread_id", s.id.String()), slog.Any("error", err))
	}
}

// writeSSE writes one server-sent event whose data is v as JSON (one line:
// JSON escapes newlines). An empty id leaves the client's last event id
// as it was, so only stitches move where a reconnect resumes.
func writeSSE(w io.Writer, event, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", event, err)
	}
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, err = io.WriteString(w, b.String())
	return err
}
