package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Ledger event types of Discord deliveries.
const (
	discordEventMessage     = "MESSAGE_CREATE"
	discordEventInteraction = "INTERACTION_CREATE"
)

// DiscordConversation starts a conversation from a mention of the bot in a
// channel, once the Discord thread att names exists on Discord: in one
// transaction, the ledger entry (keyed by the mention's message id), an
// interactive thread attached to the Discord thread with prompt (the
// mention, source discord) as its initial prompt, and a turn. It reports
// false, writing nothing more, for a mention already ingested.
func (in *Ingester) DiscordConversation(ctx context.Context, att thread.DiscordAttachment, prompt thread.Stitch) (created bool, err error) {
	ctx, span := in.tracer.Start(ctx, "gateway discord mention", trace.WithSpanKind(trace.SpanKindConsumer))
	defer func() {
		tracing.End(span, err)
		span.End()
		in.metrics.Event(string(thread.PlatformDiscord), metrics.SourceGateway, gatewayOutcome(err, created))
	}()
	prompt.Source = thread.PlatformDiscord
	prompt.Metadata = tracing.Stamp(ctx, prompt.Metadata)
	// The mention is the newest message the attachment has seen: backfill
	// reads the Discord thread after it.
	att.LastMessageID = prompt.ExternalID
	draft, err := in.Builder().WithGoal(att.ThreadName).InteractiveDiscord(&att).WithInitialPrompt(prompt).Draft(ctx)
	if err != nil {
		return false, fmt.Errorf("ingest discord conversation: %w", err)
	}
	// The ledger entry and the thread go in one round trip, the turn's job
	// in one more: a mention seen before, or a Discord thread tracked
	// already, fails the write and so writes nothing.
	inbound := discordInbound(prompt.ExternalID, discordEventMessage, "mention")
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		got, err := tx.Write(ctx, db.Write{New: draft, Inbound: &inbound})
		if err != nil {
			return err
		}
		return in.enqueueTurn(ctx, tx, got.Thread.ID)
	})
	switch {
	case errors.Is(err, thread.ErrDuplicateDelivery) || errors.Is(err, thread.ErrDiscordThreadAttached):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("ingest discord conversation: %w", err)
	}
	return true, nil
}

// DiscordMessages stores messages people posted in a tracked Discord
// thread, oldest first, in one transaction: for each one not seen before
// (by its message id, in the ledger), a discord_message stitch; then one
// turn if any was new, so a batch a backfill found is answered once.
// seenThrough is the newest message id a backfill read, bots' included: the
// thread's backfill cursor moves up to it ("" leaves it, as live messages
// do). A Discord thread weft does not
// track fails with thread.ErrNotFound and writes nothing. A message in an
// archived thread reactivates it: Discord unarchives a thread people post in.
func (in *Ingester) DiscordMessages(ctx context.Context, discordThreadID string, msgs []thread.Stitch, seenThrough string) (added int, err error) {
	ctx, span := in.tracer.Start(ctx, "gateway discord messages", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.Int("weft.messages", len(msgs))))
	defer func() {
		tracing.End(span, err)
		span.End()
		for i := range msgs {
			in.metrics.Event(string(thread.PlatformDiscord), metrics.SourceGateway, gatewayOutcome(err, i < added))
		}
	}()
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		th, err := tx.ThreadByDiscordThread(ctx, discordThreadID)
		if err != nil {
			return err
		}
		for _, s := range msgs {
			fresh, err := tx.RecordInbound(ctx, discordInbound(s.ExternalID, discordEventMessage, "message"))
			if err != nil {
				return err
			}
			if !fresh {
				continue
			}
			if err := tx.SetInboundThread(ctx, thread.PlatformDiscord, s.ExternalID, th.ID.String()); err != nil {
				return err
			}
			s.ThreadID, s.Type, s.Source = th.ID, thread.StitchDiscordMessage, thread.PlatformDiscord
			s.Metadata = tracing.Stamp(ctx, s.Metadata)
			if _, err := tx.AppendStitch(ctx, s); err != nil {
				return err
			}
			added++
		}
		if seenThrough != "" {
			if err := tx.SetDiscordLastMessage(ctx, discordThreadID, seenThrough); err != nil {
				return err
			}
		}
		if added == 0 {
			return nil
		}
		att, err := tx.DiscordAttachment(ctx, th.ID)
		if err != nil {
			return err
		}
		if !att.Active {
			if err := tx.SetDiscordActive(ctx, discordThreadID, true); err != nil {
				return err
			}
		}
		return in.enqueueTurn(ctx, tx, th.ID)
	})
	if err != nil {
		return 0, fmt.Errorf("ingest discord messages: %w", err)
	}
	return added, nil
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
func (in *Ingester) DiscordEdited(ctx context.Context, messageID, content string, at time.Time) error {
	return in.discordEdit(ctx, messageID, db.StitchEdit{Content: content, EditedAt: at})
}

// DiscordDeleted records that a message weft stored was deleted. History
// keeps the stitch (and its text) marked deleted; the model no longer sees
// it.
func (in *Ingester) DiscordDeleted(ctx context.Context, messageID string, at time.Time) error {
	return in.discordEdit(ctx, messageID, db.StitchEdit{DeletedAt: at})
}

func (in *Ingester) discordEdit(ctx context.Context, messageID string, e db.StitchEdit) error {
	if _, err := in.store.EditStitch(ctx, thread.PlatformDiscord, messageID, e); err != nil && !errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("ingest discord edit: %w", err)
	}
	return nil
}

// DiscordThreadActive records that a Discord thread was archived or deleted
// (inactive), or came back. Only the attachment changes: the weft thread
// neither completes nor fails. Threads weft does not track are ignored.
func (in *Ingester) DiscordThreadActive(ctx context.Context, discordThreadID string, active bool) error {
	if err := in.store.SetDiscordActive(ctx, discordThreadID, active); err != nil && !errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("ingest discord thread state: %w", err)
	}
	return nil
}

// DiscordTail reads the newest n messages stored for a tracked Discord
// thread, deleted ones included: a reconnect's backfill compares them with
// Discord's to record the edits and deletes it missed.
func (in *Ingester) DiscordTail(ctx context.Context, discordThreadID string, n int) ([]thread.Stitch, error) {
	msgs, err := in.store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: discordThreadID, Limit: n})
	if err != nil {
		return nil, fmt.Errorf("ingest discord tail: %w", err)
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
func (in *Ingester) ActiveDiscordThreads(ctx context.Context) ([]thread.DiscordAttachment, error) {
	var all []thread.DiscordAttachment
	after := ""
	for {
		page, err := in.store.ActiveDiscordThreads(ctx, after, db.MaxActiveDiscordThreads)
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

// DiscordInteraction records a verified interaction in the ledger, keyed
// by deliveryID (unique per interaction), and reports whether it is new.
// Discord never redelivers an interaction, so one seen before is a replay.
func (in *Ingester) DiscordInteraction(ctx context.Context, deliveryID, action string) (bool, error) {
	fresh, err := in.store.RecordInbound(ctx, discordInbound(deliveryID, discordEventInteraction, action))
	if err != nil {
		return false, fmt.Errorf("ingest discord interaction: %w", err)
	}
	return fresh, nil
}

func discordInbound(key, eventType, action string) thread.Inbound {
	return thread.Inbound{Platform: thread.PlatformDiscord, DeliveryID: key, EventKey: key, EventType: eventType, Action: action}
}
