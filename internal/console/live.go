package console

import (
	"bytes"
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

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
)

// keepAlive is how often an idle event stream sends a comment, so proxies
// and browsers do not take it for dead.
const keepAlive = 25 * time.Second

// events streams a thread's new stitches as server-sent events: each a
// "stitch" event carrying the stitch rendered as the page renders it, its
// id the stitch's position (so a reconnecting browser resumes after the
// last it got, by Last-Event-ID), the answer being written ("partial",
// see partial.go), then a "status" event with the thread's status. It wakes
// on the thread's NOTIFYs (db.Follow), never on a timer.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	id, ok := threadID(r, "id")
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ctx := r.Context()
	if _, err := c.d.Store.Thread(ctx, id); err != nil {
		c.fail(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	if c.d.Listen == nil {
		http.Error(w, "live updates are off", http.StatusServiceUnavailable)
		return
	}
	select {
	case c.live <- struct{}{}:
		defer func() { <-c.live }()
	default:
		// The browser's EventSource retries by itself.
		http.Error(w, "too many live pages open", http.StatusServiceUnavailable)
		return
	}

	conn, err := c.d.Listen(ctx)
	if err != nil {
		c.fail(w, r, fmt.Errorf("live: connect: %w", err))
		return
	}
	f, err := c.d.Store.Follow(ctx, conn, id)
	if err != nil {
		c.fail(w, r, fmt.Errorf("live: %w", err))
		return
	}
	defer func() {
		if err := f.Close(ctx); err != nil {
			c.d.Logger.WarnContext(ctx, "console: unfollow", slog.Any("error", err))
		}
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// Followed first, then caught up: a stitch committed between the page
	// and the follow is read here, one committed after it wakes Next.
	s := stream{c: c, w: w, rc: rc, id: id, after: after}
	if err := s.send(ctx); err != nil {
		s.stop(ctx, err)
		return
	}
	for {
		news, err := f.Next(ctx, keepAlive)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.stop(ctx, err)
			return
		case !news:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		}
		if err := s.send(ctx); err != nil {
			s.stop(ctx, err)
			return
		}
	}
}

// stream is one open event stream.
type stream struct {
	c     *Console
	w     io.Writer
	rc    *http.ResponseController
	id    uuid.UUID
	after int64 // the newest stitch sent
	view  partial.View
}

// send writes the stitches after the last sent, then the thread's status.
func (s *stream) send(ctx context.Context) error {
	for {
		batch, err := s.c.d.Store.ConsoleStitches(ctx, s.id, s.after, TimelineWindow)
		if err != nil {
			return err
		}
		for _, st := range batch {
			var buf bytes.Buffer
			if err := s.c.pages.byName["thread"].ExecuteTemplate(&buf, "stitch", viewStitch(s.id, &st)); err != nil {
				return fmt.Errorf("render stitch: %w", err)
			}
			if err := writeEvent(s.w, "stitch", strconv.FormatInt(st.Seq, 10), buf.String()); err != nil {
				return err
			}
			s.after = st.Seq
			s.view.Sent(&st.Stitch)
		}
		if len(batch) < TimelineWindow {
			break
		}
	}
	if err := s.sendPartial(ctx); err != nil {
		return err
	}
	th, err := s.c.d.Store.Thread(ctx, s.id)
	if err != nil {
		return err
	}
	abortable := strconv.FormatBool(thread.CanTransition(th.Status, thread.StatusAborted))
	if err := writeEvent(s.w, "status", "", string(th.Status)+" "+abortable); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stop ends a stream on an error: logged unless the operator left.
func (s *stream) stop(ctx context.Context, err error) {
	if ctx.Err() == nil {
		s.c.d.Logger.WarnContext(ctx, "console: live timeline ended", slog.String("thread_id", s.id.String()), slog.Any("error", err))
	}
}

// writeEvent writes one server-sent event; data's lines each get a
// "data:" field, which the browser joins back with newlines.
func writeEvent(w io.Writer, event, id, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// stitchView is what the "stitch" template renders: every value worked
// out beforehand and held in plain fields, since a timeline renders a
// thousand of them and the template engine's lookups (by reflection, slow
// through embedded structs) and calls are its whole cost.
type stitchView struct {
	Seq                       int64
	Type, When                string
	Author                    string
	Bot                       bool
	Source                    string
	Edited, Deleted           string // when, or empty
	Text                      string
	System, LLM, Tool         bool
	Model                     string
	InputTokens, OutputTokens int
	LatencyMS                 int64
	ToolName                  string
	ToolError                 bool
	// Unknown marks a call whose outcome weft could not know (it stopped
	// while the call ran); Intent a call about to be made.
	Unknown, Intent       bool
	ToolInput, ToolOutput string
	Metadata              string
	Bodies                string // where the LLM request and response load from, or empty
}

const timeFormat = "2006-01-02 15:04:05Z"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

// shownMetadata is a stitch's metadata as the page shows it: the pictures
// a tool returned by type and size, not their bytes (megabytes of base64).
func shownMetadata(s *thread.Stitch) []byte {
	images := s.Meta().Images
	var fields map[string]json.RawMessage
	if len(images) == 0 || json.Unmarshal(s.Metadata, &fields) != nil {
		return s.Metadata
	}
	shown := make([]string, len(images))
	for i, img := range images {
		shown[i] = fmt.Sprintf("%s, %d bytes", img.MediaType, len(img.Data))
	}
	fields["images"], _ = json.Marshal(shown) // strings always marshal
	out, _ := json.Marshal(fields)            // raw messages just read always marshal
	return out
}

func viewStitch(threadID uuid.UUID, c *db.ConsoleStitch) stitchView {
	s := &c.Stitch
	v := stitchView{
		Seq: s.Seq, Type: string(s.Type), When: fmtTime(s.CreatedAt), Source: string(s.Source),
		Edited: fmtTime(s.EditedAt), Deleted: fmtTime(s.DeletedAt), Text: s.Content,
		System: s.Type == thread.StitchSystemPrompt, LLM: s.Type == thread.StitchLLMCall, Tool: s.Type == thread.StitchToolCall,
		Model: s.Model, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, LatencyMS: s.Latency.Milliseconds(),
		ToolName: s.ToolName, ToolError: s.ToolError, Metadata: prettyJSON(shownMetadata(s)),
	}
	if s.Author != nil {
		v.Author, v.Bot = s.Author.Name, s.Author.Bot
	}
	if v.Tool {
		v.ToolInput, v.ToolOutput = prettyJSON(s.ToolInput), prettyJSON(s.ToolOutput)
		m := s.Meta()
		v.Unknown, v.Intent = m.Unknown, m.IntentOf != ""
	}
	if c.HasRequest || c.HasResponse {
		v.Bodies = Prefix + "/threads/" + threadID.String() + "/stitches/" + s.ID.String() + "/llm"
	}
	return v
}
