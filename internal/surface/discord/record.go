package discord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Ledger event types of Discord deliveries.
const (
	eventMessage     = "MESSAGE_CREATE"
	eventInteraction = "INTERACTION_CREATE"
)

// Recorder is what the gateway's events become: each is mapped to a
// surface.Event and recorded through Events; the reads a reconnect's
// backfill needs come from Store. Every gateway event is counted in
// Metrics and traced on Tracer (webhooks count and trace theirs at the
// HTTP edge).
type Recorder struct {
	Events  surface.Recorder
	Store   *db.Store
	Metrics *metrics.Metrics // nil counts nothing
	Tracer  trace.Tracer
}

var _ discordapi.Recorder = (*Recorder)(nil)

// NewRecorder returns the gateway's Recorder; tp nil traces nothing.
func NewRecorder(rec surface.Recorder, store *db.Store, m *metrics.Metrics, tp trace.TracerProvider) *Recorder {
	return &Recorder{Events: rec, Store: store, Metrics: m, Tracer: tracing.Tracer(tp)}
}

// DiscordConversation starts a conversation from a mention of the bot in a
// channel, once the Discord thread att names exists on Discord: an Open
// attached to the Discord thread with prompt (the mention) as its initial
// prompt. It reports false, writing nothing more, for a mention already
// recorded.
func (r *Recorder) DiscordConversation(ctx context.Context, att thread.DiscordAttachment, prompt thread.Stitch) (created bool, err error) {
	ctx, span := r.Tracer.Start(ctx, "gateway discord mention", trace.WithSpanKind(trace.SpanKindConsumer))
	defer func() {
		tracing.End(span, err)
		span.End()
		r.Metrics.Event(string(thread.PlatformDiscord), metrics.SourceGateway, gatewayOutcome(err, created))
	}()
	prompt.Source = thread.PlatformDiscord
	// The mention is the newest message the attachment has seen: backfill
	// reads the Discord thread after it.
	att.LastMessageID = prompt.ExternalID
	res, err := r.Events.Record(ctx, surface.Event{Kind: surface.Open, Inbound: inbound(prompt.ExternalID, eventMessage, "mention"),
		Conversation: &att, Goal: att.ThreadName, Prompt: prompt, Answer: true})
	if err != nil {
		return false, fmt.Errorf("ingest discord conversation: %w", err)
	}
	return !res.Duplicate && res.Added > 0, nil
}

// DiscordMessages stores messages people posted in a tracked Discord
// thread, oldest first, in one transaction: each one not seen before (by
// its message id, in the ledger) as a discord_message stitch, then one
// turn if any was new, so a batch a backfill found is answered once.
// seenThrough is the newest message id a backfill read, bots' included:
// the thread's backfill cursor moves up to it ("" leaves it, as live
// messages do). A Discord thread weft does not track fails with
// thread.ErrNotFound and writes nothing. A message in an archived thread
// reactivates it: Discord unarchives a thread people post in.
func (r *Recorder) DiscordMessages(ctx context.Context, discordThreadID string, msgs []thread.Stitch, seenThrough string) (added int, err error) {
	ctx, span := r.Tracer.Start(ctx, "gateway discord messages", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.Int("weft.messages", len(msgs))))
	defer func() {
		tracing.End(span, err)
		span.End()
		for i := range msgs {
			r.Metrics.Event(string(thread.PlatformDiscord), metrics.SourceGateway, gatewayOutcome(err, i < added))
		}
	}()
	stitches := make([]thread.Stitch, len(msgs))
	for i, s := range msgs {
		s.Type = thread.StitchDiscordMessage
		stitches[i] = s
	}
	// No delivery id: each message is its own ledger entry.
	res, err := r.Events.Record(ctx, surface.Event{Kind: surface.Message, Inbound: inbound("", eventMessage, "message"),
		Conversation: &thread.DiscordAttachment{DiscordThreadID: discordThreadID}, Messages: stitches, Answer: true, SeenThrough: seenThrough})
	if err == nil && res.Ignored {
		err = thread.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("ingest discord messages: %w", err)
	}
	return res.Added, nil
}

// gatewayOutcome is a gateway event's outcome for weft_events_total: a
// message in a Discord thread weft does not track is ignored.
func gatewayOutcome(err error, fresh bool) string {
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return metrics.EventIgnored
	case err != nil:
		return metrics.EventFailed
	case fresh:
		return metrics.EventAccepted
	}
	return metrics.EventDuplicate
}

// DiscordEdited records an edit of a message weft stored: its latest text
// and when. It answers nothing (no turn), and an edit of a message weft
// never stored is ignored.
func (r *Recorder) DiscordEdited(ctx context.Context, messageID, content string, at time.Time) error {
	return r.edit(ctx, surface.Edit, thread.Stitch{ExternalID: messageID, Content: content}, at)
}

// DiscordDeleted records that a message weft stored was deleted. History
// keeps the stitch (and its text) marked deleted; the model no longer sees
// it.
func (r *Recorder) DiscordDeleted(ctx context.Context, messageID string, at time.Time) error {
	return r.edit(ctx, surface.Delete, thread.Stitch{ExternalID: messageID}, at)
}

func (r *Recorder) edit(ctx context.Context, k surface.EventKind, m thread.Stitch, at time.Time) error {
	// No delivery id: an edit writes no ledger entry.
	_, err := r.Events.Record(ctx, surface.Event{Kind: k, Inbound: thread.Inbound{Platform: thread.PlatformDiscord}, Messages: []thread.Stitch{m}, At: at})
	if err != nil {
		return fmt.Errorf("ingest discord edit: %w", err)
	}
	return nil
}

// DiscordThreadActive records that a Discord thread was archived or
// deleted (inactive), or came back. Only the attachment changes: the weft
// thread neither completes nor fails. Threads weft does not track are
// ignored.
func (r *Recorder) DiscordThreadActive(ctx context.Context, discordThreadID string, active bool) error {
	k := surface.Close
	if active {
		k = surface.Reopen
	}
	_, err := r.Events.Record(ctx, surface.Event{Kind: k, Inbound: thread.Inbound{Platform: thread.PlatformDiscord},
		Conversation: &thread.DiscordAttachment{DiscordThreadID: discordThreadID}})
	if err != nil {
		return fmt.Errorf("ingest discord thread state: %w", err)
	}
	return nil
}

// DiscordTail reads the newest n messages stored for a tracked Discord
// thread, deleted ones included: a reconnect's backfill compares them with
// Discord's to record the edits and deletes it missed.
func (r *Recorder) DiscordTail(ctx context.Context, discordThreadID string, n int) ([]thread.Stitch, error) {
	msgs, err := r.Store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: discordThreadID, Limit: n})
	if err != nil {
		return nil, fmt.Errorf("discord tail: %w", err)
	}
	out := make([]thread.Stitch, 0, len(msgs))
	for _, m := range msgs {
		if m.Author.Bot {
			continue // weft's own replies: what it posted, not what people said
		}
		out = append(out, thread.Stitch{ThreadID: m.ThreadID, Content: m.Content, Source: thread.PlatformDiscord, ExternalID: m.ID,
			EditedAt: m.EditedAt, DeletedAt: m.DeletedAt})
	}
	return out, nil
}

// ActiveDiscordThreads lists every active Discord attachment: what a
// gateway backfills after it reconnects.
func (r *Recorder) ActiveDiscordThreads(ctx context.Context) ([]thread.DiscordAttachment, error) {
	var all []thread.DiscordAttachment
	after := ""
	for {
		page, err := r.Store.ActiveDiscordThreads(ctx, after, db.MaxActiveDiscordThreads)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < db.MaxActiveDiscordThreads {
			return all, nil
		}
		after = page[len(page)-1].DiscordThreadID
	}
}

func inbound(key, eventType, action string) thread.Inbound {
	return thread.Inbound{Platform: thread.PlatformDiscord, DeliveryID: key, EventKey: key, EventType: eventType, Action: action}
}
