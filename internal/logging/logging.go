// Package logging is weft's slog handler: it adds to each line the
// attributes its context carries (a request's id, a turn's thread id, the
// trace id), it writes no key twice in a line (the first one set wins:
// the logger's over the line's, the context's last), and it lets a failure that repeats
// (a database outage seen by every worker and every retry) through once per
// interval with a count of the lines it held back.
package logging

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

type ctxKey struct{}

// With returns ctx carrying attrs: every line logged with the context (the
// *Context methods of slog.Logger) carries them, unless it sets the same
// keys itself.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, ctxKey{}, all)
}

// Attrs returns the attributes With put on ctx.
func Attrs(ctx context.Context) []slog.Attr {
	a, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	return a
}

// DefaultRepeatInterval is how often a repeating warning or error is let
// through.
const DefaultRepeatInterval = 10 * time.Second

// Options configure a Handler.
type Options struct {
	// RepeatInterval is how often a warning or error with the same message
	// from the same component is written; 0 is DefaultRepeatInterval, < 0
	// writes every one.
	RepeatInterval time.Duration
	// Demote lowers a line's level before it is filtered: River's periodic
	// status lines, say, which are routine, to debug.
	Demote func(r slog.Record) slog.Level
}

// Handler wraps another slog.Handler; see the package doc.
type Handler struct {
	next   slog.Handler
	opts   Options
	repeat *repeats
	// keys set by WithAttrs, and component among them, for the checks.
	keys      map[string]bool
	component string
	grouped   bool
}

// New returns a Handler writing through next.
func New(next slog.Handler, opts Options) *Handler {
	if opts.RepeatInterval == 0 {
		opts.RepeatInterval = DefaultRepeatInterval
	}
	return &Handler{next: next, opts: opts, repeat: &repeats{seen: map[string]*repeat{}}, keys: map[string]bool{}}
}

// Enabled implements slog.Handler. With Demote, a line is asked for at
// every level, since its level is known only once it is seen.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	if h.opts.Demote != nil {
		return h.next.Enabled(ctx, slog.LevelDebug) || h.next.Enabled(ctx, l)
	}
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if h.opts.Demote != nil {
		r.Level = h.opts.Demote(r)
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
	}
	if r.Level >= slog.LevelWarn && h.opts.RepeatInterval > 0 {
		held, ok := h.repeat.let(h.component+"\x00"+r.Message, r.Time, h.opts.RepeatInterval)
		if !ok {
			return nil
		}
		if held > 0 {
			r.AddAttrs(slog.Int("repeats_held_back", held))
		}
	}
	r = h.dedupe(r)
	if extra := h.fromContext(ctx, r); len(extra) > 0 {
		r.AddAttrs(extra...)
	}
	return h.next.Handle(ctx, r)
}

// dedupe drops the attributes of r whose keys its logger or an earlier
// attribute of r set already; r itself when there are none.
func (h *Handler) dedupe(r slog.Record) slog.Record {
	if h.grouped {
		return r
	}
	dup := false
	seen := map[string]bool{}
	r.Attrs(func(a slog.Attr) bool {
		dup = h.keys[a.Key] || seen[a.Key]
		seen[a.Key] = true
		return !dup
	})
	if !dup {
		return r
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	clear(seen)
	r.Attrs(func(a slog.Attr) bool {
		if !h.keys[a.Key] && !seen[a.Key] {
			out.AddAttrs(a)
		}
		seen[a.Key] = true
		return true
	})
	return out
}

// fromContext is what ctx adds to r: its With attributes and trace id,
// less the keys the line or its logger set already.
func (h *Handler) fromContext(ctx context.Context, r slog.Record) []slog.Attr {
	attrs := Attrs(ctx)
	sc := trace.SpanContextFromContext(ctx)
	if len(attrs) == 0 && !sc.IsValid() {
		return nil
	}
	if sc.IsValid() {
		attrs = append(attrs[:len(attrs):len(attrs)], slog.String("trace_id", sc.TraceID().String()))
	}
	if h.grouped {
		// Inside a group the keys would not collide, but the ids belong
		// at the top, where they were not put: leave them out.
		return nil
	}
	set := map[string]bool{}
	r.Attrs(func(a slog.Attr) bool {
		set[a.Key] = true
		return true
	})
	var out []slog.Attr
	for _, a := range attrs {
		if h.keys[a.Key] || set[a.Key] {
			continue
		}
		set[a.Key] = true
		out = append(out, a)
	}
	return out
}

// WithAttrs implements slog.Handler.
// A key the logger has already is dropped: logger.With("component", "x")
// on a logger that has a component keeps the first.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	if h.grouped {
		c.next = h.next.WithAttrs(attrs)
		return &c
	}
	c.keys = make(map[string]bool, len(h.keys)+len(attrs))
	for k := range h.keys {
		c.keys[k] = true
	}
	kept := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if c.keys[a.Key] {
			continue
		}
		c.keys[a.Key] = true
		kept = append(kept, a)
		if a.Key == "component" {
			c.component = a.Value.String()
		}
	}
	c.next = h.next.WithAttrs(kept)
	return &c
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.grouped = c.grouped || name != ""
	return &c
}

// repeats remembers, per message, when it was last written and how many
// lines were held back since.
type repeats struct {
	mu   sync.Mutex
	seen map[string]*repeat
}

type repeat struct {
	last time.Time
	held int
}

// maxRepeats bounds the messages remembered: messages are constant, so
// this is never reached but by a bug, which then costs a reset.
const maxRepeats = 10000

// let says whether a line keyed key at t is written, and how many were
// held back before it.
func (rs *repeats) let(key string, t time.Time, every time.Duration) (int, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.seen[key]
	if !ok {
		if len(rs.seen) >= maxRepeats {
			rs.seen = map[string]*repeat{}
		}
		rs.seen[key] = &repeat{last: t}
		return 0, true
	}
	if t.Sub(r.last) < every {
		r.held++
		return 0, false
	}
	held := r.held
	r.last, r.held = t, 0
	return held, true
}

// RiverDemote lowers River's routine status lines (a producer's job
// counts, a maintenance service that ran) to debug.
func RiverDemote(r slog.Record) slog.Level {
	if r.Level == slog.LevelInfo && (strings.HasSuffix(r.Message, ": Producer job counts") || strings.Contains(r.Message, ": Ran successfully")) {
		return slog.LevelDebug
	}
	return r.Level
}
